package simserve_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
)

// TestTokenizeWithPiecesIsBounded: llama.cpp's /tokenize with_pieces
// answers every piece, and the memory it allocates does not grow by
// hundreds of bytes per content byte (a map per piece did).
func TestTokenizeWithPiecesIsBounded(t *testing.T) {
	srv, url := simservetest.Start(t, simserve.Options{As: backend.LlamaCpp})
	status, body := do(t, http.MethodPost, url+"/tokenize", `{"content":"Hello, world! \"quoted\"","with_pieces":true}`)
	var got struct {
		Tokens []struct {
			ID    int    `json:"id"`
			Piece string `json:"piece"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || status != 200 || len(got.Tokens) < 4 {
		t.Fatalf("HTTP %d %s: %v", status, body, err)
	}
	var joined strings.Builder
	for _, p := range got.Tokens {
		joined.WriteString(p.Piece)
	}
	if !strings.Contains(joined.String(), `"quoted"`) {
		t.Fatalf("pieces %q do not rebuild the content", joined.String())
	}

	const contentBytes = 1 << 18
	req, _ := json.Marshal(map[string]any{"content": strings.Repeat("word ", contentBytes/5), "with_pieces": true})
	h := srv.Handler()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := &discard{header: http.Header{}}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/tokenize", strings.NewReader(string(req))))
	runtime.ReadMemStats(&after)
	if w.status != 200 || w.n < contentBytes {
		t.Fatalf("HTTP %d, %d bytes", w.status, w.n)
	}
	if perByte := float64(after.TotalAlloc-before.TotalAlloc) / contentBytes; perByte > 40 {
		t.Fatalf("%.0f bytes allocated per content byte", perByte)
	}
}

// discard is a ResponseWriter that counts what it is sent.
type discard struct {
	header http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header { return d.header }
func (d *discard) WriteHeader(s int)   { d.status = s }
func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = 200
	}
	d.n += len(p)
	return len(p), nil
}

// TestRequestBodiesAreBounded: a body declared over the request cap gets
// 413, and bodies past what the server holds at once get 503 at once,
// while the server keeps answering. The large bodies are only declared:
// each connection sends its headers and a few bytes, then waits.
func TestRequestBodiesAreBounded(t *testing.T) {
	_, url := simservetest.Start(t, simserve.Options{As: backend.VLLM})
	addr := strings.TrimPrefix(url, "http://")
	send := func(length string) (*bufio.Reader, net.Conn) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		hdr := "Content-Length: " + length + "\r\n"
		if length == "chunked" {
			hdr = "Transfer-Encoding: chunked\r\n"
		}
		fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%s\r\n{\"model\":", hdr)
		return bufio.NewReader(c), c
	}
	status := func(r *bufio.Reader) int {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return 0 // no answer within the deadline: the body was let in
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if r, _ := send(fmt.Sprint(65 << 20)); status(r) != http.StatusRequestEntityTooLarge {
		t.Fatal("a body over 64 MiB was not refused with 413")
	}
	// Three bodies of 60 MiB and one of unknown length (counted as 64
	// MiB) fill the budget of four largest bodies; the next is refused.
	for _, n := range []string{fmt.Sprint(60 << 20), fmt.Sprint(60 << 20), fmt.Sprint(60 << 20), "chunked"} {
		send(n)
	}
	var r *bufio.Reader
	for range 20 { // the four above reserve as their headers are read
		var c net.Conn
		r, c = send(fmt.Sprint(60 << 20))
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		if status(r) == http.StatusServiceUnavailable {
			break
		}
		r = nil
	}
	if r == nil {
		t.Fatal("no 503 with the budget of bodies in flight full")
	}
	st, body := do(t, http.MethodPost, url+"/v1/completions", `{"model":"`+testModel+`","prompt":"hi","max_tokens":2,"stream":false}`)
	if st != http.StatusOK { // 12 MiB of the budget are left
		t.Fatalf("a small request: HTTP %d %s", st, body)
	}
}
