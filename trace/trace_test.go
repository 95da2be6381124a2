package trace

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// TestFixtures reads every hand-made fixture (testdata/SOURCES.md) with
// the layout detected and checks each row.
func TestFixtures(t *testing.T) {
	cases := []struct {
		file   string
		format Format
		rows   []Row
		notes  int
	}{
		{"servebench.jsonl", Servebench, []Row{
			{Line: 1, At: 0, InputTokens: 120, OutputTokens: 40, Session: "s1", Turn: 1, PrefixGroup: "support"},
			{Line: 2, At: ms(250.5), InputTokens: 64, OutputTokens: 16},
			{Line: 3, At: ms(250.5), InputTokens: 300, OutputTokens: 32, Images: 1},
			{Line: 6, At: ms(900), InputTokens: 90, OutputTokens: 8, Session: "7", Turn: 1, Images: 1, PrefixGroup: "2"},
			{Line: 5, At: ms(1800), InputTokens: 410, OutputTokens: 40, Session: "s1", Turn: 2, PrefixGroup: "support"},
		}, 0},
		{"azure-2023.csv", Azure, []Row{
			{Line: 2, At: 0, InputTokens: 374, OutputTokens: 44},
			{Line: 3, At: 219530 * time.Microsecond, InputTokens: 1020, OutputTokens: 12},
			{Line: 4, At: 319410 * time.Microsecond, InputTokens: 88, OutputTokens: 260},
			{Line: 5, At: 2819410100 * time.Nanosecond, InputTokens: 2048, OutputTokens: 7},
		}, 0},
		{"azure-2024.csv", Azure, []Row{
			{Line: 2, At: 0, InputTokens: 2162, OutputTokens: 5},
			{Line: 4, At: time.Second, InputTokens: 97, OutputTokens: 31},
		}, 1},
		{"burstgpt.csv", BurstGPT, []Row{
			{Line: 2, At: 0, InputTokens: 472, OutputTokens: 18},
			{Line: 3, At: 40 * time.Second, InputTokens: 1087, OutputTokens: 230},
			{Line: 5, At: 113 * time.Second, InputTokens: 200, OutputTokens: 76},
		}, 1},
		{"burstgpt-sessions.csv", BurstGPT, []Row{
			{Line: 2, At: 0, InputTokens: 130, OutputTokens: 52, Session: "a1f3"},
			{Line: 3, At: 2500 * time.Millisecond, InputTokens: 260, OutputTokens: 61, Session: "a1f3"},
			{Line: 4, At: 2750 * time.Millisecond, InputTokens: 90, OutputTokens: 12, Session: "b7,c2"},
		}, 0},
		{"mooncake.jsonl", Mooncake, []Row{
			{Line: 1, At: 0, InputTokens: 1100, OutputTokens: 20, HashIDs: []int{0, 1, 2}},
			{Line: 2, At: 0, InputTokens: 700, OutputTokens: 12, HashIDs: []int{0, 3}},
			{Line: 3, At: 3 * time.Second, InputTokens: 1400, OutputTokens: 9, HashIDs: []int{0, 1, 4}},
			{Line: 4, At: 4500 * time.Millisecond, InputTokens: 300, OutputTokens: 30, HashIDs: []int{5}, Session: "conv-9"},
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			tr, err := ReadFile("testdata/"+c.file, "")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != c.format {
				t.Errorf("format %q, want %q", tr.Format, c.format)
			}
			if !reflect.DeepEqual(tr.Rows, c.rows) {
				t.Errorf("rows\n got %+v\nwant %+v", tr.Rows, c.rows)
			}
			if len(tr.Notes) != c.notes {
				t.Errorf("notes %q, want %d", tr.Notes, c.notes)
			}
			// Naming the layout gives the same rows.
			named, err := ReadFile("testdata/"+c.file, c.format)
			if err != nil || !reflect.DeepEqual(named.Rows, tr.Rows) {
				t.Errorf("with the format named: %v, %+v", err, named)
			}
		})
	}
}

// TestMalformedRows: each malformed row is one *ParseError naming the
// file and the line, and the field at fault.
func TestMalformedRows(t *testing.T) {
	const azureHead = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	const burstHead = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	good := `{"t_ms":0,"input_tokens":5,"output_tokens":3}` + "\n"
	cases := []struct {
		name   string
		format Format
		in     string
		line   int
		want   string
	}{
		{"servebench unknown key", "", good + `{"t_ms":1,"input_tokens":5,"output_tokens":3,"prompt":"x"}`, 2, `unknown field "prompt"`},
		{"servebench missing output", "", good + "\n" + `{"t_ms":1,"input_tokens":5}`, 3, "field output_tokens missing"},
		{"servebench negative time", "", `{"t_ms":-1,"input_tokens":5,"output_tokens":3}`, 1, "field t_ms"},
		{"servebench wrong type", "", good + `{"t_ms":"soon","input_tokens":5,"output_tokens":3}`, 2, "field t_ms"},
		{"servebench turn zero", "", `{"t_ms":0,"input_tokens":5,"output_tokens":3,"turn":0}`, 1, "field turn"},
		{"servebench image count", "", `{"t_ms":0,"input_tokens":5,"output_tokens":3,"image":99}`, 1, "field image"},
		{"servebench session object", "", `{"t_ms":0,"input_tokens":5,"output_tokens":3,"session":{}}`, 1, "field session"},
		{"servebench broken json", "", good + good + `{"t_ms":0,`, 3, "invalid JSON"},
		{"servebench two values", Servebench, good + good[:len(good)-1] + good, 2, "more than one JSON value"},
		{"servebench array line", Servebench, good + "[1,2]\n", 2, "not a JSON object"},
		{"mooncake negative length", "", `{"timestamp":0,"input_length":-4,"output_length":3}`, 1, "field input_length"},
		{"mooncake bad hash", "", `{"timestamp":0,"input_length":4,"output_length":3,"hash_ids":[1,-2]}`, 1, "hash_ids[1]"},
		{"mooncake missing timestamp", Mooncake, `{"input_length":4,"output_length":3}`, 1, "field timestamp missing"},
		{"azure bad time", "", azureHead + "2023-11-16 18:15:46.68,1,2\nyesterday,3,4\n", 3, `column TIMESTAMP: "yesterday"`},
		{"azure short row", "", azureHead + "2023-11-16 18:15:46.68,1\n", 2, "GeneratedTokens"},
		{"azure negative tokens", "", azureHead + "2023-11-16 18:15:46.68,-1,2\n", 2, "column ContextTokens"},
		{"azure bad quote", "", azureHead + "2023-11-16 18:15:46.68,1,2\n\"x,1,2\n", 3, "quote"},
		{"azure header lacks column", Azure, "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.68,1\n", 1, `lacks the column "GeneratedTokens"`},
		{"burstgpt bad seconds", "", burstHead + "5,ChatGPT,1,2,3,API log\nfive,ChatGPT,1,2,3,API log\n", 3, "column Timestamp"},
		{"burstgpt fraction tokens", "", burstHead + "5,ChatGPT,1.5,2,3,API log\n", 2, "column Request tokens"},
		{"unknown layout", "", "time,in,out\n1,2,3\n", 1, "unknown trace layout"},
		{"unknown json", "", `{"when":1}`, 1, "--trace-format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in), "trace.x", c.format)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err %v, want a *ParseError", err)
			}
			if pe.File != "trace.x" || pe.Line != c.line || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %q (line %d), want trace.x line %d naming %q", err, pe.Line, c.line, c.want)
			}
			if !strings.HasPrefix(err.Error(), "trace.x:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %q is not one line starting with the file", err)
			}
		})
	}
}

func TestEmptyAndAllSkipped(t *testing.T) {
	for name, in := range map[string]string{
		"empty":       "",
		"blank":       "\n \n",
		"all failed":  "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,GPT-4,5,0,5,API log\n",
		"header only": "TIMESTAMP,ContextTokens,GeneratedTokens\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Read(strings.NewReader(in), "t", ""); err == nil || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v, want one line", err)
			}
		})
	}
}

func TestWindowAndSpeed(t *testing.T) {
	tr, err := ReadFile("testdata/burstgpt.csv", "") // arrivals at 0, 40 s, 113 s
	if err != nil {
		t.Fatal(err)
	}
	w, err := tr.Window(30*time.Second, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Rows) != 2 || w.Rows[0].At != 10*time.Second || w.Rows[1].At != 83*time.Second {
		t.Fatalf("window rows %+v", w.Rows)
	}
	if len(tr.Rows) != 3 || tr.Rows[1].At != 40*time.Second {
		t.Fatal("Window changed its trace")
	}
	if open, _ := tr.Window(40*time.Second, 0); len(open.Rows) != 2 {
		t.Fatalf("an open window kept %d rows", len(open.Rows))
	}
	if _, err := tr.Window(200*time.Second, time.Second); err == nil || !strings.Contains(err.Error(), "no request arrives") {
		t.Fatalf("empty window: %v", err)
	}
	s := w.Speed(4)
	if s.Rows[0].At != 2500*time.Millisecond || s.Rows[1].At != 20750*time.Millisecond || w.Rows[1].At != 83*time.Second {
		t.Fatalf("speed rows %+v", s.Rows)
	}
	if r := s.MeanRate(); r < 0.0547 || r > 0.0549 { // 1 / (20.75 s − 2.5 s)
		t.Fatalf("mean rate %v", r)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": "", "auto": "", "azure": Azure, "mooncake": Mooncake} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("sharegpt"); err == nil {
		t.Error("sharegpt accepted")
	}
}

// fuzzRead is the property every parser must hold: no panic, and either
// rows sorted from 0 with replayable lengths or a one-line error; a
// *ParseError has a line ≥ 1.
func fuzzRead(t *testing.T, b []byte, f Format) {
	tr, err := Read(bytes.NewReader(b), "f", f)
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error on several lines: %q", err)
		}
		var pe *ParseError
		if errors.As(err, &pe) && pe.Line < 1 {
			t.Fatalf("ParseError line %d", pe.Line)
		}
		return
	}
	if len(tr.Rows) == 0 || tr.Rows[0].At != 0 {
		t.Fatalf("rows %+v", tr.Rows)
	}
	for i, r := range tr.Rows {
		if r.InputTokens < 1 || r.OutputTokens < 1 || r.Line < 1 || i > 0 && r.At < tr.Rows[i-1].At {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
}

func FuzzServebench(f *testing.F) {
	f.Add([]byte(`{"t_ms": 0, "input_tokens": 120, "output_tokens": 40, "session": "s1", "turn": 1, "prefix_group": 3, "image": true}`))
	f.Add([]byte("{\"t_ms\":5,\"input_tokens\":1,\"output_tokens\":1}\n\n{\"t_ms\":1e300}"))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, b, Servebench) })
}

func FuzzMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}`))
	f.Add([]byte("{\"timestamp\":0,\"input_length\":1,\"output_length\":0}\n{\"timestamp\":-0.0}"))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, b, Mooncake) })
}

func FuzzAzure(f *testing.F) {
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2024-05-10 00:00:00.009930+00:00,2162,5\n"))
	f.Add([]byte("GeneratedTokens,TIMESTAMP,ContextTokens\n1,\"2023-11-16 18:15:46\",2\n"))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, b, Azure) })
}

func FuzzBurstGPT(f *testing.F) {
	f.Add([]byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n"))
	f.Add([]byte("Timestamp,Session ID,Request tokens,Response tokens\n1e9,\"a\"\"b\",3,0\n"))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, b, BurstGPT) })
}

// FuzzDetect feeds any bytes to the layout detection and whichever parser
// it picks.
func FuzzDetect(f *testing.F) {
	f.Add([]byte("\xef\xbb\xbfTIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,1,2\n"))
	f.Add([]byte(`{"timestamp":0,"input_length":4,"output_length":3}`))
	f.Add([]byte(`{"t_ms":0,"input_tokens":5,"output_tokens":3}`))
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, b, "") })
}

// TestLineTooLong: a JSON Lines row longer than the line cap is one error
// naming the file, the line and the cap (not bufio's "token too long").
func TestLineTooLong(t *testing.T) {
	in := `{"t_ms":0,"input_tokens":4,"output_tokens":4}` + "\n" + `{"t_ms":1,"session":"` + strings.Repeat("s", maxLineBytes) + `"}` + "\n"
	_, err := Read(strings.NewReader(in), "big.jsonl", "")
	if err == nil || !strings.Contains(err.Error(), "big.jsonl:2: a line longer than 16 MiB") || strings.Contains(err.Error(), "bufio") {
		t.Fatalf("err %v", err)
	}
}
