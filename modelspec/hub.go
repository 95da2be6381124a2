package modelspec

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/servebench/servebench/internal/filecap"
)

// Hub reads models from a Hugging Face hub: config.json, and the header
// of each safetensors file by HTTP Range (a few KiB to a few MiB per
// file, never the weights), which gives every tensor's exact size.
type Hub struct {
	// Endpoint is the hub's base URL; files are at
	// Endpoint/<id>/resolve/<Revision>/<file>, as huggingface_hub reads
	// them.
	Endpoint string
	// Revision is the branch, tag or commit; "" = main.
	Revision string
	// Token, when set, is sent as a bearer token (gated and private
	// models). It is never printed.
	Token string
	// Client does the requests; nil = one with a 60 s timeout.
	Client *http.Client
}

// HubFromEnv is the hub huggingface_hub would use: its base URL from
// HF_ENDPOINT, its token from HF_TOKEN. servebench names no hub host of
// its own: without HF_ENDPOINT it fetches nothing.
func HubFromEnv() (*Hub, error) {
	ep := strings.TrimRight(strings.TrimSpace(os.Getenv("HF_ENDPOINT")), "/")
	if ep == "" {
		return nil, errors.New("to fetch its config.json from the hub set HF_ENDPOINT to the hub's base URL, or pass a downloaded config.json")
	}
	u, err := url.Parse(ep)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("HF_ENDPOINT %q: want an http or https base URL", ep)
	}
	return &Hub{Endpoint: ep, Token: strings.TrimSpace(os.Getenv("HF_TOKEN"))}, nil
}

// maxSafetensorsHeader caps a safetensors header: real ones are under a
// few MiB (one JSON entry per tensor); the format itself caps them at
// 100 MB.
const maxSafetensorsHeader = 100 << 20

// errNotFound is a file the hub does not have.
var errNotFound = errors.New("not found")

// Fetch reads the model id: its config.json into a spec (Name is id),
// the weight format its quantization_config states, and, when the
// repository holds safetensors files, the exact bytes of their tensors
// (Spec.WeightsBytes). Errors are one line naming the id.
func (h *Hub) Fetch(ctx context.Context, id string) (Spec, string, error) {
	key := h.Endpoint + "\x00" + h.Revision + "\x00" + id
	fetchedMu.Lock()
	f, ok := fetched[key]
	fetchedMu.Unlock()
	if ok {
		return f.m.clone(), f.format, nil
	}
	m, format, err := h.fetch(ctx, id)
	if err == nil {
		fetchedMu.Lock()
		fetched[key] = fetchedModel{m.clone(), format}
		fetchedMu.Unlock()
	}
	return m, format, err
}

// fetched holds the models this process read from a hub: a simulated
// run resolves its model more than once, and the hub is read once.
var (
	fetchedMu sync.Mutex
	fetched   = map[string]fetchedModel{}
)

type fetchedModel struct {
	m      Spec
	format string
}

func (h *Hub) fetch(ctx context.Context, id string) (Spec, string, error) {
	b, err := h.get(ctx, id, "config.json", 0, filecap.Config)
	if err != nil {
		return Spec{}, "", h.describe(id, "config.json", err)
	}
	m, err := ParseHFConfig(b)
	if err != nil {
		return Spec{}, "", fmt.Errorf("%s: config.json: %v", id, err)
	}
	m.Name = id
	format := quantMethod(b)
	n, files, err := h.safetensorsBytes(ctx, id)
	switch {
	case err == nil:
		m.WeightsBytes = n
		m.WeightsSource = fmt.Sprintf("safetensors headers of %d file(s) on the hub", files)
	case !errors.Is(err, errNotFound):
		return Spec{}, "", err
	}
	return m, format, nil
}

// quantMethod is config.json's quantization_config.quant_method ("awq",
// "gptq", "fp8", "mxfp4"), lowercased; "" when absent.
func quantMethod(b []byte) string {
	var c struct {
		Q struct {
			Method string `json:"quant_method"`
		} `json:"quantization_config"`
	}
	if json.Unmarshal(b, &c) != nil {
		return ""
	}
	return strings.ToLower(c.Q.Method)
}

// safetensorsBytes sums the tensor bytes of the repository's safetensors
// files: those model.safetensors.index.json maps, else the single
// model.safetensors. errNotFound: the repository has neither.
func (h *Hub) safetensorsBytes(ctx context.Context, id string) (int64, int, error) {
	files := []string{"model.safetensors"}
	b, err := h.get(ctx, id, "model.safetensors.index.json", 0, filecap.Document)
	switch {
	case err == nil:
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(b, &idx); err != nil || len(idx.WeightMap) == 0 {
			return 0, 0, fmt.Errorf("%s: model.safetensors.index.json: no weight_map", id)
		}
		seen := map[string]bool{}
		files = files[:0]
		for _, f := range idx.WeightMap {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
		sort.Strings(files)
	case !errors.Is(err, errNotFound):
		return 0, 0, h.describe(id, "model.safetensors.index.json", err)
	}
	var total int64
	for _, f := range files {
		n, err := h.tensorBytes(ctx, id, f)
		if errors.Is(err, errNotFound) && len(files) == 1 {
			return 0, 0, err
		}
		if err != nil {
			return 0, 0, h.describe(id, f, err)
		}
		total += n
	}
	return total, len(files), nil
}

// tensorBytes reads the header of one safetensors file (8 bytes of
// little-endian length, then that many bytes of JSON) and sums its
// tensors' data_offsets spans.
func (h *Hub) tensorBytes(ctx context.Context, id, file string) (int64, error) {
	lb, err := h.get(ctx, id, file, 0, 8)
	if err != nil {
		return 0, err
	}
	if len(lb) < 8 {
		return 0, errors.New("shorter than a safetensors header")
	}
	n := binary.LittleEndian.Uint64(lb)
	if n == 0 || n > maxSafetensorsHeader {
		return 0, fmt.Errorf("safetensors header of %d bytes: not a safetensors file", n)
	}
	hb, err := h.get(ctx, id, file, 8, int64(n))
	if err != nil {
		return 0, err
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return 0, fmt.Errorf("safetensors header: %v", err)
	}
	var total int64
	for name, raw := range hdr {
		if name == "__metadata__" {
			continue
		}
		var t struct {
			Offsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || len(t.Offsets) != 2 || t.Offsets[1] < t.Offsets[0] {
			return 0, fmt.Errorf("safetensors header: tensor %q: bad data_offsets", name)
		}
		total += t.Offsets[1] - t.Offsets[0]
	}
	return total, nil
}

// get reads limit bytes of file from offset off (off 0 and limit a cap:
// the whole of a small file). It asks for a Range when off > 0 or the
// file is a safetensors file, and copes with a server that ignores it.
func (h *Hub) get(ctx context.Context, id, file string, off, limit int64) ([]byte, error) {
	rev := h.Revision
	if rev == "" {
		rev = "main"
	}
	u := h.Endpoint + "/" + id + "/resolve/" + url.PathEscape(rev) + "/" + file
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	ranged := strings.HasSuffix(file, ".safetensors")
	if ranged {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+limit-1))
	}
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	c := h.Client
	if c == nil {
		c = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		// the URL holds no secret; the error is the transport's
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, errNotFound
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("HTTP %d: gated or private (set HF_TOKEN to a token that may read it)", resp.StatusCode)
	case resp.StatusCode == http.StatusOK && ranged && off > 0:
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			return nil, err
		}
	case resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent:
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if !ranged && int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	if int64(len(b)) > limit {
		b = b[:limit]
	}
	return b, nil
}

// describe is one line for a failed read of file of id.
func (h *Hub) describe(id, file string, err error) error {
	if errors.Is(err, errNotFound) {
		return fmt.Errorf("%w %q: not a preset, and the hub at %s has no %s for it", ErrUnknownModel, id, h.Endpoint, file)
	}
	return fmt.Errorf("%s: %s from the hub at %s: %v", id, file, h.Endpoint, err)
}
