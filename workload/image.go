package workload

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/servebench/servebench/backend"
)

// ImageFormat is the encoding of generated images.
type ImageFormat string

// Image formats.
const (
	PNG  ImageFormat = "png"
	JPEG ImageFormat = "jpeg"
)

// ParseImageFormat returns the ImageFormat named s ("png", "jpeg", "jpg").
func ParseImageFormat(s string) (ImageFormat, error) {
	switch strings.ToLower(s) {
	case "png":
		return PNG, nil
	case "jpeg", "jpg":
		return JPEG, nil
	}
	return "", fmt.Errorf("unknown image format %q (want png or jpeg)", s)
}

// ParseImageSize parses "WxH" (e.g. "512x512") into positive dimensions no
// larger than 8192.
func ParseImageSize(s string) (w, h int, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(s), "x")
	if ok {
		w, err = strconv.Atoi(ws)
		if err == nil {
			h, err = strconv.Atoi(hs)
		}
	}
	if !ok || err != nil || w <= 0 || h <= 0 || w > 8192 || h > 8192 {
		return 0, 0, fmt.Errorf("invalid image size %q (want WxH, e.g. 512x512, each 1..8192)", s)
	}
	return w, h, nil
}

// MakeImage draws the image of request seq: a colour gradient, random
// rectangles and a strip encoding seq in blocks, all drawn from (seed,
// seq), so every request's image differs (no encoder-cache hits) and the
// same seed gives the same images. It is encoded as format.
func MakeImage(seed int64, seq, w, h int, format ImageFormat) (backend.Image, error) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(uint64(seed)^0x1a2b3c4d, uint64(int64(seq))))
	c0, c1 := randColor(r), randColor(r)
	for y := range h {
		for x := range w {
			t := float64(x+y) / float64(w+h)
			img.SetRGBA(x, y, lerp(c0, c1, t))
		}
	}
	for range 6 {
		fill(img, r.IntN(w), r.IntN(h), 1+r.IntN(max(w/3, 1)), 1+r.IntN(max(h/3, 1)), randColor(r))
	}
	// A strip of 32 blocks spelling seq in binary: unique even if the
	// random draws ever collided.
	bw := max(w/32, 1)
	for i := range 32 {
		c := color.RGBA{0, 0, 0, 255}
		if uint32(seq)>>i&1 == 1 {
			c = color.RGBA{255, 255, 255, 255}
		}
		fill(img, i*bw, 0, bw, max(h/32, 1), c)
	}
	var buf bytes.Buffer
	var err error
	mime := "image/png"
	if format == JPEG {
		mime = "image/jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	if err != nil {
		return backend.Image{}, err
	}
	return backend.Image{MIME: mime, Data: buf.Bytes()}, nil
}

func randColor(r *rand.Rand) color.RGBA {
	return color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
}

func lerp(a, b color.RGBA, t float64) color.RGBA {
	f := func(x, y uint8) uint8 { return uint8(float64(x) + (float64(y)-float64(x))*t) }
	return color.RGBA{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B), 255}
}

func fill(img *image.RGBA, x0, y0, w, h int, c color.RGBA) {
	b := img.Bounds()
	for y := max(y0, 0); y < min(y0+h, b.Max.Y); y++ {
		for x := max(x0, 0); x < min(x0+w, b.Max.X); x++ {
			img.SetRGBA(x, y, c)
		}
	}
}
