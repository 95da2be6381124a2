package simserve_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/servebench/servebench/backend"
	"github.com/servebench/servebench/internal/testenv"
	"github.com/servebench/servebench/simserve"
	"github.com/servebench/servebench/simserve/simservetest"
	"github.com/servebench/servebench/telemetry"
)

// The shape tests hold what the simulated servers send to the fixtures of
// real outputs in backend/testdata and telemetry/testdata (see their
// SOURCES.md): the same JSON fields at the same paths with the same kinds
// of value, the same kinds of stream chunk, the same metric families with
// the same types, HELP texts and label names. Values (ids, texts, times,
// counts) are free to differ. Where a simulated output cannot match a
// fixture field for field, the difference is listed with its reason.

// kind is the JSON kind of a decoded value.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64, json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// shapeOf is a canonical description of v's structure: keys sorted, the
// kinds of scalars, the shape of an array's first element.
func shapeOf(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k + ":" + shapeOf(x[k]))
		}
		b.WriteByte('}')
		return b.String()
	case []any:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + shapeOf(x[0]) + "]"
	}
	return kind(v)
}

// diffShape lists where got's structure differs from want's: missing and
// extra keys, different kinds. allow maps a path to the reason it may
// differ; arrays are compared by their first elements.
func diffShape(path string, got, want any, allow map[string]string) []string {
	if _, ok := allow[path]; ok {
		return nil
	}
	if kind(got) != kind(want) {
		return []string{fmt.Sprintf("%s: %s, the fixture has %s", path, kind(got), kind(want))}
	}
	var out []string
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				if _, allowed := allow[path+"."+k]; !allowed {
					out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
				}
				continue
			}
			out = append(out, diffShape(path+"."+k, gv, wv, allow)...)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				if _, allowed := allow[path+"."+k]; !allowed {
					out = append(out, fmt.Sprintf("%s.%s: not in the fixture", path, k))
				}
			}
		}
	case []any:
		g := got.([]any)
		if len(g) > 0 && len(w) > 0 {
			out = append(out, diffShape(path+"[0]", g[0], w[0], allow)...)
		}
	}
	sort.Strings(out)
	return out
}

// decode parses JSON keeping numbers as float64.
func decode(t *testing.T, what string, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v: %.200s", what, err, b)
	}
	return v
}

func fixture(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.RepoFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stream is a response body split into chunks: SSE data payloads or
// NDJSON lines, decoded; done says whether [DONE] ended it.
type stream struct {
	chunks []any
	done   bool
}

func parseStream(t *testing.T, what string, body []byte, ndjson bool) stream {
	t.Helper()
	var s stream
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if ndjson {
			if line != "" {
				s.chunks = append(s.chunks, decode(t, what, []byte(line)))
			}
			continue
		}
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue // comments (the fixtures' sources), blank lines
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			s.done = true
			continue
		}
		s.chunks = append(s.chunks, decode(t, what, []byte(data)))
	}
	return s
}

// chunkShapes is the set of distinct chunk shapes of a stream.
func chunkShapes(s stream) map[string]bool {
	m := map[string]bool{}
	for _, c := range s.chunks {
		m[shapeOf(c)] = true
	}
	return m
}

// compareStreams requires the simulated stream to have the fixture's
// kinds of chunk and no other, and its end marker; fixtureOnly names
// fixture chunks the simulator never sends (by a substring of their
// shape) with the reason.
func compareStreams(t *testing.T, got, want stream, fixtureOnly map[string]string) {
	t.Helper()
	g, w := chunkShapes(got), chunkShapes(want)
	for s := range g {
		if !w[s] {
			t.Errorf("simulated chunk shape not in the fixture:\n  %s\nfixture shapes:\n  %s", s, strings.Join(sortedKeys(w), "\n  "))
		}
	}
	for s := range w {
		if g[s] {
			continue
		}
		if slices.ContainsFunc(mapKeys(fixtureOnly), func(sub string) bool { return strings.Contains(s, sub) }) {
			continue
		}
		t.Errorf("fixture chunk shape the simulator never sends:\n  %s\nsimulated shapes:\n  %s", s, strings.Join(sortedKeys(g), "\n  "))
	}
	if got.done != want.done {
		t.Errorf("[DONE] at the end: simulated %v, fixture %v", got.done, want.done)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// post sends body to url and returns the whole response body.
func post(t *testing.T, url, body string) []byte {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d: %s", url, resp.StatusCode, b)
	}
	return b
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d: %s", url, resp.StatusCode, b)
	}
	return b
}

const testModel = "Qwen/Qwen2.5-7B-Instruct-AWQ"

func start(t *testing.T, as backend.Kind) string {
	t.Helper()
	_, url := simservetest.Start(t, simserve.Options{As: as})
	return url
}

// TestStreamShapes: each personality's streams have the chunks of the
// fixture of its server.
func TestStreamShapes(t *testing.T) {
	chat := func(extra string) string {
		return `{"model":"` + testModel + `","messages":[{"role":"user","content":"hello there"}],"stream":true,"max_tokens":4` + extra + `}`
	}
	const usage = `,"stream_options":{"include_usage":true}`
	cases := []struct {
		name, as, path, body, fixture string
		ndjson                        bool
		// fixtureOnly are fixture chunks the simulator never sends.
		fixtureOnly map[string]string
		// trimUsage drops usage from the fixture's chunks that have
		// choices (continuous usage stats, which the request did not ask).
		trimUsage bool
	}{
		{name: "vllm chat, continuous usage", as: "vllm", path: "/v1/chat/completions",
			body: chat(`,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`), fixture: "backend/testdata/vllm-continuous-usage.sse"},
		{name: "openai chat, usage", as: "openai", path: "/v1/chat/completions", body: chat(usage),
			fixture: "backend/testdata/vllm-continuous-usage.sse", trimUsage: true},
		{name: "sglang chat, usage", as: "sglang", path: "/v1/chat/completions", body: chat(usage),
			fixture:     "backend/testdata/sglang-stream.sse",
			fixtureOnly: map[string]string{"reasoning_content:string": "the fixture's server ran a reasoning parser; the simulated model does not reason"}},
		{name: "llamacpp chat", as: "llamacpp", path: "/v1/chat/completions", body: chat(usage), fixture: "backend/testdata/llamacpp-stream.sse"},
		{name: "tgi chat, usage", as: "tgi", path: "/v1/chat/completions", body: chat(usage), fixture: "backend/testdata/tgi-stream.sse"},
		{name: "tgi generate_stream, details", as: "tgi", path: "/generate_stream",
			body: `{"inputs":"What is Deep Learning?","parameters":{"max_new_tokens":3,"details":true}}`, fixture: "backend/testdata/tgi-2.2.0-generate-stream.sse"},
		{name: "ollama /v1 chat, usage", as: "ollama", path: "/v1/chat/completions", body: chat(usage), fixture: "backend/testdata/ollama-0.6.5-openai-chat-testbed.sse"},
		{name: "ollama /v1 completions, usage", as: "ollama", path: "/v1/completions",
			body: `{"model":"` + testModel + `","prompt":"hello there","stream":true,"max_tokens":3` + usage + `}`, fixture: "backend/testdata/ollama-0.6.5-openai-completions-testbed.sse"},
		{name: "ollama /api/chat", as: "ollama", path: "/api/chat", ndjson: true,
			body: `{"model":"` + testModel + `","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":4}}`, fixture: "backend/testdata/ollama-chat-testbed.ndjson"},
		{name: "ollama /api/generate", as: "ollama", path: "/api/generate", ndjson: true,
			body: `{"model":"` + testModel + `","prompt":"hi","options":{"num_predict":4}}`, fixture: "backend/testdata/ollama-generate-testbed.ndjson"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := start(t, backend.Kind(tc.as))
			got := parseStream(t, "simulated", post(t, url+tc.path, tc.body), tc.ndjson)
			want := parseStream(t, tc.fixture, fixture(t, tc.fixture), tc.ndjson)
			if tc.trimUsage {
				for _, c := range want.chunks {
					if m := c.(map[string]any); len(m["choices"].([]any)) > 0 {
						delete(m, "usage")
					}
				}
			}
			if len(got.chunks) == 0 {
				t.Fatal("no chunks")
			}
			compareStreams(t, got, want, tc.fixtureOnly)
		})
	}
}

// TestJSONShapes: the identity endpoints answer with the fields of the
// fixture of their server.
func TestJSONShapes(t *testing.T) {
	cases := []struct {
		name, as, method, path, body, fixture string
		allow                                 map[string]string
		// normalize rewrites both documents before the comparison.
		normalize func(v any) any
	}{
		{name: "vllm /v1/models", as: "vllm", method: "GET", path: "/v1/models", fixture: "backend/testdata/vllm-v1-models.json"},
		{name: "ollama /v1/models", as: "ollama", method: "GET", path: "/v1/models", fixture: "backend/testdata/ollama-0.6.5-v1-models-testbed.json"},
		{name: "llamacpp /props", as: "llamacpp", method: "GET", path: "/props", fixture: "backend/testdata/llamacpp-b9014-props.json"},
		{name: "llamacpp /slots", as: "llamacpp", method: "GET", path: "/slots", fixture: "backend/testdata/llamacpp-b9014-slots.json"},
		{name: "tgi /info", as: "tgi", method: "GET", path: "/info", fixture: "backend/testdata/tgi-2.2.0-info.json"},
		{name: "ollama /api/version", as: "ollama", method: "GET", path: "/api/version", fixture: "backend/testdata/ollama-0.6.5-version-testbed.json"},
		{name: "ollama /api/tags", as: "ollama", method: "GET", path: "/api/tags", fixture: "backend/testdata/ollama-0.6.5-tags-testbed.json"},
		{name: "ollama /api/ps", as: "ollama", method: "GET", path: "/api/ps", fixture: "backend/testdata/ollama-0.11.6-ps.json"},
		{name: "ollama /api/show", as: "ollama", method: "POST", path: "/api/show", body: `{"model":"` + testModel + `"}`,
			fixture: "backend/testdata/ollama-0.11.6-show.json", normalize: normalizeModelInfo,
			allow: map[string]string{
				"$.model_info.general.languages": "the fixture's model lists no languages (null); the simulated one neither",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := start(t, backend.Kind(tc.as))
			var body []byte
			if tc.method == "POST" {
				body = post(t, url+tc.path, tc.body)
			} else {
				body = get(t, url+tc.path)
			}
			got, want := decode(t, "simulated", body), decode(t, tc.fixture, fixture(t, tc.fixture))
			if tc.normalize != nil {
				got, want = tc.normalize(got), tc.normalize(want)
			}
			for _, d := range diffShape("$", got, want, tc.allow) {
				t.Error(d)
			}
		})
	}
}

// normalizeModelInfo makes Ollama's model_info comparable across models:
// the architecture's prefix becomes "ARCH." and the training metadata
// particular to the fixture's model (general.dataset.N.*,
// general.base_model.N.*) is dropped from both.
func normalizeModelInfo(v any) any {
	doc := v.(map[string]any)
	mi, ok := doc["model_info"].(map[string]any)
	if !ok {
		return v
	}
	arch, _ := mi["general.architecture"].(string)
	out := map[string]any{}
	for k, x := range mi {
		if strings.HasPrefix(k, "general.dataset.") || strings.HasPrefix(k, "general.base_model.") {
			continue
		}
		if arch != "" && strings.HasPrefix(k, arch+".") {
			k = "ARCH." + strings.TrimPrefix(k, arch+".")
		}
		// the keys are flat: "general.x" must not read as a path
		out[strings.ReplaceAll(k, ".", "_")] = x
	}
	doc["model_info"] = out
	return doc
}

// metricShape is what the comparison holds equal of a metric family.
type metricShape struct {
	typ, help string
	labels    string // sorted label names of its samples, le excluded
	buckets   string // a histogram's upper bounds
}

func metricShapes(t *testing.T, what string, b []byte) map[string]metricShape {
	t.Helper()
	fams, err := telemetry.ParseExposition(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	out := map[string]metricShape{}
	for name, f := range fams {
		s := metricShape{typ: f.GetType().String(), help: f.GetHelp()}
		if len(f.Metric) > 0 {
			s.labels = labelNames(f.Metric[0])
			if h := f.Metric[0].GetHistogram(); h != nil {
				var ub []string
				for _, bk := range h.GetBucket() {
					ub = append(ub, fmt.Sprint(bk.GetUpperBound()))
				}
				s.buckets = strings.Join(ub, " ")
			}
		}
		out[name] = s
	}
	return out
}

func labelNames(m *dto.Metric) string {
	var n []string
	for _, l := range m.GetLabel() {
		n = append(n, l.GetName())
	}
	sort.Strings(n)
	return strings.Join(n, ",")
}

// TestMetricShapes: /metrics has its server's families (type, HELP,
// labels, histogram buckets as in the fixture), at least every one
// servebench's telemetry reads that the fixture has, and, where the
// fixture is a whole page of one version, exactly its families.
func TestMetricShapes(t *testing.T) {
	cases := []struct {
		as      string
		kind    backend.Kind
		fixture string
		// exact: the simulator has the fixture's families and no other,
		// but for omit (family → reason).
		exact bool
		omit  map[string]string
	}{
		{as: "vllm", kind: backend.VLLM, fixture: "telemetry/testdata/vllm-v1-metrics-opt125m-cpu.txt"},
		{as: "sglang", kind: backend.SGLang, fixture: "telemetry/testdata/sglang-0.4-metrics-docs.txt", exact: true,
			omit: map[string]string{"sglang:func_latency_seconds": "times SGLang's own Python functions, which the simulator does not have"}},
		{as: "llamacpp", kind: backend.LlamaCpp, fixture: "telemetry/testdata/llamacpp-c392e50-metrics-kv.txt", exact: true},
		{as: "tgi", kind: backend.TGI, fixture: "telemetry/testdata/tgi-2.2.0-metrics.txt", exact: true},
	}
	for _, tc := range cases {
		t.Run(tc.as, func(t *testing.T) {
			url := start(t, backend.Kind(tc.as))
			// one request, so the histograms have observations
			post(t, url+"/v1/chat/completions", `{"model":"`+testModel+`","messages":[{"role":"user","content":"hi"}],"max_tokens":3}`)
			got := metricShapes(t, "simulated /metrics", get(t, url+"/metrics"))
			want := metricShapes(t, tc.fixture, fixture(t, tc.fixture))
			for name, g := range got {
				w, ok := want[name]
				switch {
				case !ok:
					t.Errorf("%s: not in the fixture", name)
				case g.typ != w.typ || g.labels != w.labels || g.buckets != w.buckets:
					t.Errorf("%s: %+v, the fixture has %+v", name, g, w)
				case w.help != "" && g.help != w.help:
					t.Errorf("%s: HELP %q, the fixture has %q", name, g.help, w.help)
				}
			}
			names, _ := backend.MetricsFor(tc.kind)
			for _, list := range [][]string{names.KVUsage, names.Preemptions, names.Running, names.Waiting, names.KVTokensUsed, names.KVTokensMax, names.CacheInfo} {
				for _, n := range list {
					if _, inFixture := want[n]; inFixture {
						if _, ok := got[n]; !ok {
							t.Errorf("%s: read by telemetry and in the fixture, but not simulated", n)
						}
					}
				}
			}
			if tc.exact {
				for name := range want {
					if _, ok := got[name]; !ok && tc.omit[name] == "" {
						t.Errorf("%s: in the fixture, not simulated", name)
					}
				}
			}
		})
	}
}
