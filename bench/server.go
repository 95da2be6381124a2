package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// streamServer is the loopback server written for the benchmark: an
// OpenAI-compatible /v1/chat/completions that streams vLLM-shaped chunks
// (cumulative usage on each, as with continuous_usage_stats) as fast as it
// can, or paced, as the user prompt asks:
//
//	"burst N F"   N chunks, flushed every F chunks, no pause
//	"hold N G"    N chunks, one every G µs (holds the stream open)
//	"paced N G K" N chunks every G µs, stamping each chunk's send time
//	              (monotonic, from server start) under key K for GET /stamps
//
// It runs in its own process so the client's CPU and memory are measured
// alone.
type streamServer struct {
	start  time.Time
	active atomic.Int64 // streams being served now
	mu     sync.Mutex
	stamps map[string]pacedStamps
	bufs   sync.Pool
}

func runServer() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s := &streamServer{start: time.Now(), stamps: map[string]pacedStamps{},
		bufs: sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.chat)
	mux.HandleFunc("/stamps", s.getStamps)
	mux.HandleFunc("/active", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, s.active.Load())
	})
	fmt.Fprintln(os.Stdout, ln.Addr().String())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

var contentKey = []byte(`"content":"`)

// prompt extracts the user message without decoding the whole body.
func prompt(body []byte) string {
	i := bytes.Index(body, contentKey)
	if i < 0 {
		return ""
	}
	rest := body[i+len(contentKey):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 {
		return string(rest[:j])
	}
	return ""
}

func (s *streamServer) chat(w http.ResponseWriter, r *http.Request) {
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	var in bytes.Buffer
	in.Grow(1024)
	if _, err := in.ReadFrom(r.Body); err != nil {
		return
	}
	f := strings.Fields(prompt(in.Bytes()))
	if len(f) < 3 {
		http.Error(w, "prompt must be: mode n arg [key]", 400)
		return
	}
	n, _ := strconv.Atoi(f[1])
	arg, _ := strconv.Atoi(f[2])
	w.Header().Set("Content-Type", "text/event-stream")
	s.active.Add(1)
	defer s.active.Add(-1)
	buf := (*bp)[:0]
	switch f[0] {
	case "burst":
		buf = s.burst(w, buf, n, max(arg, 1))
	case "hold":
		buf = s.paced(w, buf, n, time.Duration(arg)*time.Microsecond, nil)
	case "paced":
		st := pacedStamps{Sent: make([]int64, 0, n), Late: make([]int64, 0, n)}
		buf = s.paced(w, buf, n, time.Duration(arg)*time.Microsecond, &st)
		if len(f) > 3 {
			s.mu.Lock()
			s.stamps[f[3]] = st
			s.mu.Unlock()
		}
	}
	buf = appendEnd(buf, n)
	_, _ = w.Write(buf)
	*bp = buf
}

func (s *streamServer) burst(w http.ResponseWriter, buf []byte, n, flushEvery int) []byte {
	fl := w.(http.Flusher)
	for i := 1; i <= n; i++ {
		buf = appendChunk(buf, i, i == n)
		if i%flushEvery == 0 {
			if _, err := w.Write(buf); err != nil {
				return buf[:0]
			}
			fl.Flush()
			buf = buf[:0]
		}
	}
	return buf
}

// pacedStamps are the send times of a paced stream's chunks (ns from server
// start) and how late the server woke for each (ns past its schedule): the
// lateness shows the machine's own scheduling jitter, which no client can
// measure below.
type pacedStamps struct {
	Sent []int64 `json:"sent"`
	Late []int64 `json:"late"`
}

func (s *streamServer) paced(w http.ResponseWriter, buf []byte, n int, gap time.Duration, stamps *pacedStamps) []byte {
	fl := w.(http.Flusher)
	next := time.Now()
	for i := 1; i <= n; i++ {
		next = next.Add(gap)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		buf = appendChunk(buf[:0], i, i == n)
		if stamps != nil {
			now := time.Now()
			stamps.Sent = append(stamps.Sent, int64(now.Sub(s.start)))
			stamps.Late = append(stamps.Late, int64(max(now.Sub(next), 0)))
		}
		if _, err := w.Write(buf); err != nil {
			return buf[:0]
		}
		fl.Flush()
	}
	return buf[:0]
}

// appendChunk writes the i-th content chunk, vLLM-shaped.
func appendChunk(b []byte, i int, last bool) []byte {
	b = append(b, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764400000,"model":"bench","choices":[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":`...)
	if last {
		b = append(b, `"length"`...)
	} else {
		b = append(b, `null`...)
	}
	b = append(b, `}],"usage":{"prompt_tokens":8,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(8+i), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	return append(b, "}}\n\n"...)
}

func appendEnd(b []byte, n int) []byte {
	b = append(b, `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1764400000,"model":"bench","choices":[],"usage":{"prompt_tokens":8,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(8+n), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, "}}\n\ndata: [DONE]\n\n"...)
}

func (s *streamServer) getStamps(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	s.mu.Lock()
	st, ok := s.stamps[key]
	delete(s.stamps, key)
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(st)
}
