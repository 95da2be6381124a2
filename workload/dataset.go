package workload

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/servebench/servebench/backend"
)

// DatasetFormat is the layout of a prompt dataset file (run --dataset).
type DatasetFormat string

// Dataset formats.
const (
	// DatasetAuto detects the layout from the file's first non-blank
	// byte and first row: a JSON array is ShareGPT, JSON Lines rows with
	// "messages" are Messages, with "prompt" Prompt.
	DatasetAuto DatasetFormat = "auto"
	// ShareGPT is a JSON array of {"conversations": [{"from": "human"|
	// "gpt"|"system", "value": "…"}, …]}, the layout of the ShareGPT
	// dumps vLLM's benchmark reads; a row may list "image" or "images".
	ShareGPT DatasetFormat = "sharegpt"
	// PromptLines is JSON Lines of {"prompt": "…"}, optionally with
	// "image" or "images" (file paths or data: URLs), as Hugging Face
	// datasets export.
	PromptLines DatasetFormat = "jsonl-prompt"
	// MessageLines is JSON Lines of {"messages": [{"role", "content"}, …]}
	// in OpenAI's chat shape; content is a string or a list of "text" and
	// "image_url" parts.
	MessageLines DatasetFormat = "jsonl-messages"
)

// DatasetFormats lists the formats in the order help texts show them.
var DatasetFormats = []DatasetFormat{DatasetAuto, ShareGPT, PromptLines, MessageLines}

// ParseDatasetFormat returns the DatasetFormat named s.
func ParseDatasetFormat(s string) (DatasetFormat, error) {
	for _, f := range DatasetFormats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown dataset format %q (want one of %v)", s, DatasetFormats)
}

// DatasetRow is one prompt of a dataset: the messages before it (a
// system prompt, earlier turns), its user text and its images.
type DatasetRow struct {
	// Line is where the row starts in the file, from 1 (for messages).
	Line    int
	History []backend.Message
	Prompt  string
	Images  []backend.Image
}

// Dataset is a prompt dataset as read: its rows in file order.
type Dataset struct {
	File   string
	Format DatasetFormat
	Rows   []DatasetRow
	// Skipped counts the malformed rows left out (SkipBad).
	Skipped int
}

// DatasetOptions say how ReadDataset reads a file.
type DatasetOptions struct {
	// Format forces a layout; "" or DatasetAuto detects it.
	Format DatasetFormat
	// SkipBad leaves malformed rows out (counted in Dataset.Skipped)
	// instead of failing at the first.
	SkipBad bool
}

// maxDatasetLine bounds one JSON Lines row (images inline as data URLs
// make rows long).
const maxDatasetLine = 64 << 20

// ReadDataset reads the dataset at path. A malformed row is an error
// naming the file and line, unless opts.SkipBad; a file without one
// usable row is an error. Image paths are read relative to the file's
// folder.
func ReadDataset(path string, opts DatasetOptions) (*Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseDataset(path, data, filepath.Dir(path), opts)
}

// ParseDataset is ReadDataset of data read from file; dir is the folder
// image paths are relative to ("" refuses image paths: data URLs only).
func ParseDataset(file string, data []byte, dir string, opts DatasetOptions) (*Dataset, error) {
	f := opts.Format
	if f == "" || f == DatasetAuto {
		var err error
		if f, err = detectDataset(data); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
	}
	d := &Dataset{File: file, Format: f}
	p := rowParser{dir: dir}
	var err error
	if f == ShareGPT {
		err = d.readShareGPT(data, p, opts.SkipBad)
	} else {
		err = d.readLines(data, p, opts.SkipBad)
	}
	if err != nil {
		return nil, err
	}
	if len(d.Rows) == 0 {
		return nil, fmt.Errorf("%s: no usable row (%d malformed)", file, d.Skipped)
	}
	return d, nil
}

// detectDataset tells the layout from the first non-blank byte ('[' is
// ShareGPT) and the first line's keys.
func detectDataset(data []byte) (DatasetFormat, error) {
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(t) == 0 {
		return "", errors.New("empty dataset")
	}
	if t[0] == '[' {
		return ShareGPT, nil
	}
	line, _, _ := bytes.Cut(t, []byte("\n"))
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(line, &probe); err != nil {
		return "", fmt.Errorf("line 1: not a JSON array (ShareGPT) nor a JSON object (JSON Lines): %v", err)
	}
	switch {
	case probe["messages"] != nil:
		return MessageLines, nil
	case probe["prompt"] != nil:
		return PromptLines, nil
	case probe["conversations"] != nil:
		return "", errors.New(`line 1 has "conversations": ShareGPT files are one JSON array (use --dataset-format sharegpt for an array)`)
	}
	return "", errors.New(`line 1 has neither "prompt" nor "messages" (JSON Lines) and the file is no JSON array (ShareGPT); --dataset-format forces a layout`)
}

// readLines reads a JSON Lines dataset, one row per non-blank line.
func (d *Dataset) readLines(data []byte, p rowParser, skipBad bool) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxDatasetLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row DatasetRow
		var err error
		if d.Format == MessageLines {
			row, err = p.messagesRow(line)
		} else {
			row, err = p.promptRow(line)
		}
		if err != nil {
			if !skipBad {
				return fmt.Errorf("%s:%d: %v (--skip-bad-rows leaves such rows out)", d.File, n, err)
			}
			d.Skipped++
			continue
		}
		row.Line = n
		d.Rows = append(d.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", d.File, err)
	}
	return nil
}

// shareGPTRow is one conversation of a ShareGPT file.
type shareGPTRow struct {
	Conversations []struct {
		From  string `json:"from"`
		Value string `json:"value"`
	} `json:"conversations"`
	Image  json.RawMessage `json:"image"`
	Images json.RawMessage `json:"images"`
}

// readShareGPT reads a ShareGPT array. Each conversation gives one row,
// as vLLM's benchmark does: its first human turn is the prompt (a system
// turn before it is kept as History); later turns are left out.
func (d *Dataset) readShareGPT(data []byte, p rowParser, skipBad bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return fmt.Errorf("%s:1: a ShareGPT file is a JSON array of conversations", d.File)
	}
	for dec.More() {
		line := lineAt(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s:%d: %v", d.File, line, err)
		}
		row, err := p.shareGPTRow(raw)
		if err != nil {
			if !skipBad {
				return fmt.Errorf("%s:%d: %v (--skip-bad-rows leaves such rows out)", d.File, line, err)
			}
			d.Skipped++
			continue
		}
		row.Line = line
		d.Rows = append(d.Rows, row)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("%s:%d: %v", d.File, lineAt(data, dec.InputOffset()), err)
	}
	return nil
}

// lineAt is the line, from 1, of the first non-blank byte at or after off.
func lineAt(data []byte, off int64) int {
	i := int(min(off, int64(len(data))))
	for i < len(data) && strings.IndexByte(" \t\r\n,", data[i]) >= 0 {
		i++
	}
	return 1 + bytes.Count(data[:i], []byte("\n"))
}

// rowParser turns one row's JSON into a DatasetRow.
type rowParser struct{ dir string }

func (p rowParser) shareGPTRow(raw []byte) (DatasetRow, error) {
	var r shareGPTRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return DatasetRow{}, err
	}
	var row DatasetRow
	for _, t := range r.Conversations {
		switch t.From {
		case "system":
			row.History = append(row.History, backend.Message{Role: backend.System, Content: t.Value})
			continue
		case "human", "user":
			row.Prompt = t.Value
		default:
			continue // an answer before any human turn
		}
		break
	}
	if row.Prompt == "" {
		return row, errors.New(`conversation has no non-empty "human" turn`)
	}
	var err error
	row.Images, err = p.imageField(r.Image, r.Images)
	return row, err
}

func (p rowParser) promptRow(line []byte) (DatasetRow, error) {
	var r struct {
		Prompt *string         `json:"prompt"`
		Image  json.RawMessage `json:"image"`
		Images json.RawMessage `json:"images"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return DatasetRow{}, err
	}
	if r.Prompt == nil || *r.Prompt == "" {
		return DatasetRow{}, errors.New(`no non-empty "prompt" string`)
	}
	images, err := p.imageField(r.Image, r.Images)
	return DatasetRow{Prompt: *r.Prompt, Images: images}, err
}

// messagesRow reads an OpenAI messages row: the last message is the
// user's prompt (with its image_url parts), the ones before its History.
func (p rowParser) messagesRow(line []byte) (DatasetRow, error) {
	var r struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return DatasetRow{}, err
	}
	n := len(r.Messages)
	if n == 0 || r.Messages[n-1].Role != "user" {
		return DatasetRow{}, errors.New(`"messages" must end with a "user" message`)
	}
	var row DatasetRow
	for i, m := range r.Messages {
		role, err := messageRole(m.Role)
		if err != nil {
			return row, fmt.Errorf("messages[%d]: %v", i, err)
		}
		text, urls, err := messageContent(m.Content)
		if err != nil {
			return row, fmt.Errorf("messages[%d].content: %v", i, err)
		}
		if i < n-1 {
			if len(urls) > 0 {
				return row, fmt.Errorf("messages[%d]: images are taken from the last (user) message only", i)
			}
			row.History = append(row.History, backend.Message{Role: role, Content: text})
			continue
		}
		row.Prompt = text
		for _, u := range urls {
			im, err := p.image(u)
			if err != nil {
				return row, err
			}
			row.Images = append(row.Images, im)
		}
	}
	if row.Prompt == "" && len(row.Images) == 0 {
		return row, errors.New("the last user message is empty")
	}
	return row, nil
}

func messageRole(s string) (backend.Role, error) {
	for _, r := range []backend.Role{backend.System, backend.User, backend.Assistant} {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("role %q: want system, user or assistant", s)
}

// messageContent reads a message's content: a string, or a list of
// {"type": "text", "text"} and {"type": "image_url", "image_url": {"url"}}
// parts (texts joined by a blank line).
func messageContent(raw json.RawMessage) (text string, urls []string, err error) {
	if err := json.Unmarshal(raw, &text); err == nil {
		return text, nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, errors.New("want a string or a list of text and image_url parts")
	}
	var texts []string
	for i, pt := range parts {
		switch pt.Type {
		case "text":
			texts = append(texts, pt.Text)
		case "image_url":
			urls = append(urls, pt.ImageURL.URL)
		default:
			return "", nil, fmt.Errorf("part %d: type %q: want text or image_url", i, pt.Type)
		}
	}
	return strings.Join(texts, "\n\n"), urls, nil
}

// maxDatasetImage bounds one image file of a dataset.
const maxDatasetImage = 32 << 20

// imageField reads a row's "image" (one string) or "images" (a list).
func (p rowParser) imageField(one, many json.RawMessage) ([]backend.Image, error) {
	var refs []string
	if len(one) > 0 && string(one) != "null" {
		var s string
		if err := json.Unmarshal(one, &s); err != nil {
			return nil, errors.New(`"image" must be a string (a file path or a data: URL)`)
		}
		refs = append(refs, s)
	}
	if len(many) > 0 && string(many) != "null" {
		var ss []string
		if err := json.Unmarshal(many, &ss); err != nil {
			return nil, errors.New(`"images" must be a list of strings (file paths or data: URLs)`)
		}
		refs = append(refs, ss...)
	}
	var out []backend.Image
	for _, r := range refs {
		im, err := p.image(r)
		if err != nil {
			return nil, err
		}
		out = append(out, im)
	}
	return out, nil
}

// image reads one image reference: a base64 data: URL, or a file path
// relative to the dataset's folder. Remote URLs are refused: fetching
// them would be measured as the server's time, or not at all.
func (p rowParser) image(ref string) (backend.Image, error) {
	if rest, ok := strings.CutPrefix(ref, "data:"); ok {
		meta, b64, ok := strings.Cut(rest, ",")
		mime, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 || !strings.HasPrefix(mime, "image/") {
			return backend.Image{}, errors.New("image data URL: want data:image/…;base64,…")
		}
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return backend.Image{}, fmt.Errorf("image data URL: %v", err)
		}
		return backend.Image{MIME: mime, Data: data}, nil
	}
	if strings.Contains(ref, "://") {
		return backend.Image{}, fmt.Errorf("image %q: remote URLs are not fetched; use a file path or a data: URL", ref)
	}
	if p.dir == "" {
		return backend.Image{}, fmt.Errorf("image %q: file paths need a dataset file", ref)
	}
	path := ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.dir, ref)
	}
	f, err := os.Open(path)
	if err != nil {
		return backend.Image{}, fmt.Errorf("image: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDatasetImage+1))
	if err != nil {
		return backend.Image{}, fmt.Errorf("image: %v", err)
	}
	if len(data) > maxDatasetImage {
		return backend.Image{}, fmt.Errorf("image %s: larger than %d MiB", ref, maxDatasetImage>>20)
	}
	mime := http.DetectContentType(data)
	if !strings.HasPrefix(mime, "image/") {
		return backend.Image{}, fmt.Errorf("image %s: not an image (%s)", ref, mime)
	}
	return backend.Image{MIME: mime, Data: data}, nil
}
