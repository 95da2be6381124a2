package modelspec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/servebench/servebench/gguf"
)

// maxGGUFHeader caps the bytes read of a GGUF file at a URL: its header
// (metadata, the tokenizer's vocabulary, tensor infos) is a few MiB; the
// weights behind it are never read.
const maxGGUFHeader = 64 << 20

// IsGGUFURL reports whether arg is an http(s) URL of a .gguf file.
func IsGGUFURL(arg string) bool {
	u, err := url.Parse(arg)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		strings.EqualFold(path.Ext(u.Path), ".gguf")
}

// FetchGGUF reads the header of the GGUF file at rawURL: one HTTP Range
// request from byte 0, whose answer gives the file's size
// (Content-Range, or Content-Length from a server that ignores Range)
// and is read only as far as the header goes (at most 64 MiB) before
// the connection is closed. It gives the spec and the exact tensor
// bytes, as ReadGGUF does for a local file. $HF_TOKEN is sent only to
// the hub $HF_ENDPOINT names.
func FetchGGUF(ctx context.Context, rawURL string, client *http.Client) (Spec, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return Spec{}, errors.New("the GGUF URL does not parse")
	}
	// A signed or token-bearing URL keeps its secret in the query, the
	// fragment or the user info: errors show the rest only.
	shown := (&url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: req.URL.Path}).String()
	// Open-ended: the answer states the file's size, and the body is
	// closed as soon as the header is parsed, so the weights behind it are
	// not transferred.
	req.Header.Set("Range", "bytes=0-")
	if tok := strings.TrimSpace(os.Getenv("HF_TOKEN")); tok != "" && sameHub(rawURL) {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return Spec{}, fmt.Errorf("%s: %v", shown, ue.Err)
		}
		return Spec{}, fmt.Errorf("%s: %v", shown, err)
	}
	defer resp.Body.Close()
	size, err := ggufSize(resp)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %v", shown, err)
	}
	info, err := gguf.Parse(io.LimitReader(resp.Body, maxGGUFHeader), size)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %v (a header is read up to %d MiB)", shown, err, maxGGUFHeader>>20)
	}
	name := path.Base(req.URL.Path)
	m, err := FromGGUF(info, name)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %v", shown, err)
	}
	m.Name = name
	if n := info.Strings["general.name"]; n != "" {
		m.Name = n + " (" + name + ")"
	}
	return m, nil
}

// ggufSize is the whole file's size from an answer to a Range request.
func ggufSize(resp *http.Response) (int64, error) {
	switch resp.StatusCode {
	case http.StatusPartialContent:
		// Content-Range: bytes 0-N/TOTAL
		cr := resp.Header.Get("Content-Range")
		i := strings.LastIndexByte(cr, '/')
		n, err := strconv.ParseInt(strings.TrimSpace(cr[i+1:]), 10, 64)
		if i < 0 || err != nil || n <= 0 {
			return 0, fmt.Errorf("Content-Range %q states no file size", cr)
		}
		return n, nil
	case http.StatusOK:
		if resp.ContentLength <= 0 {
			return 0, errors.New("the server states no file size (no Content-Length)")
		}
		return resp.ContentLength, nil
	case http.StatusNotFound:
		return 0, errors.New("HTTP 404: no such file")
	case http.StatusUnauthorized, http.StatusForbidden:
		return 0, fmt.Errorf("HTTP %d: gated or private (set HF_TOKEN for the hub at HF_ENDPOINT)", resp.StatusCode)
	}
	return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
}

// sameHub reports whether rawURL is on the hub $HF_ENDPOINT names.
func sameHub(rawURL string) bool {
	ep := strings.TrimRight(strings.TrimSpace(os.Getenv("HF_ENDPOINT")), "/")
	return ep != "" && strings.HasPrefix(rawURL, ep+"/")
}

// fetchGGUFCached is FetchGGUF read once per process and URL (a
// simulated run resolves its model more than once).
func fetchGGUFCached(ctx context.Context, rawURL string) (Spec, error) {
	key := "gguf\x00" + rawURL
	fetchedMu.Lock()
	f, ok := fetched[key]
	fetchedMu.Unlock()
	if ok {
		return f.m.clone(), nil
	}
	m, err := FetchGGUF(ctx, rawURL, nil)
	if err == nil {
		fetchedMu.Lock()
		fetched[key] = fetchedModel{m: m.clone()}
		fetchedMu.Unlock()
	}
	return m, err
}
