package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/servebench/servebench/internal/filecap"
)

// DecodeError is a result document that could not be read. It names the
// file and, where one value is to blame, that value's JSON path (for
// example "runs[2].levels[0].ttft_p50_ms"), so that one line tells the user
// what to fix.
type DecodeError struct {
	// File is the file name as the user gave it.
	File string
	// Path is the JSON path of the bad value; empty for the whole file.
	Path string
	// Msg says what is wrong.
	Msg string
}

// Error is "FILE: PATH: MSG", or "FILE: MSG" without a path.
func (e *DecodeError) Error() string {
	if e.Path == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Path + ": " + e.Msg
}

// ReadFile reads and decodes the result document in file path. A file
// over filecap.Document (512 MiB) is an error that says so: result
// documents are a few KiB to MiB, and decoding one holds several times its
// size.
func ReadFile(path string) (*Document, error) {
	data, err := filecap.ReadFile(path, filecap.Document, "a result document")
	if filecap.IsTooLarge(err) {
		return nil, &DecodeError{File: path, Msg: err.Error() + " (records files, .jsonl, are read line by line without this cap)"}
	}
	if err != nil {
		return nil, &DecodeError{File: path, Msg: "cannot read: " + unwrapPathError(err)}
	}
	return Decode(path, data)
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Decode decodes a result document from data; name is the file name used
// in errors. The document must be one JSON object of the shapes of
// examples/ (see Document): it must hold "runs" (sweep shape) or "records"
// (batch shape), every known field must have its type, and concurrency
// levels must be at least 1.
// Unknown fields are allowed (newer writers may add fields).
func Decode(name string, data []byte) (*Document, error) {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, &DecodeError{File: name, Msg: "not JSON: " + syntaxMessage(data, err)}
	}
	if rest := bytes.TrimSpace(data[dec.InputOffset():]); len(rest) > 0 {
		return nil, &DecodeError{File: name, Msg: "not JSON: more than one value (trailing data after the document)"}
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, &DecodeError{File: name, Msg: fmt.Sprintf("not a servebench result document: top level is %s, want an object with \"runs\" or \"records\"", kindOf(raw))}
	}
	if _, hasRuns := top["runs"]; !hasRuns {
		if _, hasRecords := top["records"]; !hasRecords {
			return nil, &DecodeError{File: name, Msg: fmt.Sprintf("not a servebench result document: no \"runs\" or \"records\" (top-level keys: %s)", keyList(top))}
		}
	}
	if path, msg := check("", raw, reflect.TypeFor[Document]()); msg != "" {
		return nil, &DecodeError{File: name, Path: path, Msg: msg}
	}
	var doc Document
	if err := json.Unmarshal(data, &doc); err != nil {
		// check accepted what encoding/json refuses: report it whole.
		return nil, &DecodeError{File: name, Msg: err.Error()}
	}
	if path, msg := validate(&doc); msg != "" {
		return nil, &DecodeError{File: name, Path: path, Msg: msg}
	}
	return &doc, nil
}

// validate checks the values that the types cannot: every level and
// record has a concurrency of at least 1.
func validate(doc *Document) (path, msg string) {
	for i, r := range doc.Runs {
		for j, l := range r.Levels {
			if l.Concurrency < 1 {
				return fmt.Sprintf("runs[%d].levels[%d].concurrency", i, j), fmt.Sprintf("want an integer ≥ 1, got %d", l.Concurrency)
			}
		}
	}
	for i, r := range doc.Records {
		if r.Concurrency < 1 {
			return fmt.Sprintf("records[%d].concurrency", i), fmt.Sprintf("want an integer ≥ 1, got %d", r.Concurrency)
		}
	}
	return "", ""
}

// syntaxMessage turns a JSON syntax error into words with a line and column.
func syntaxMessage(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(data, se.Offset)
		return fmt.Sprintf("%v at line %d, column %d", se, line, col)
	}
	if errors.Is(err, io.EOF) {
		return "empty file"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of file"
	}
	return err.Error()
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// rawMessage is the type of a field that holds any JSON value.
var rawMessage = reflect.TypeFor[json.RawMessage]()

// check walks the generic JSON value v against Go type t and returns the
// JSON path and a message for the first value of the wrong kind. Null is
// accepted for pointers, slices and maps (it means "absent").
func check(path string, v any, t reflect.Type) (string, string) {
	if v == nil {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			return "", ""
		}
		return path, "want " + wantOf(t) + ", got null"
	}
	if t == rawMessage {
		return "", "" // any JSON value (record.SimInfo.Engine)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return check(path, v, t.Elem())
	case reflect.Interface:
		return "", ""
	case reflect.Struct:
		return checkStruct(path, v, t)
	case reflect.Slice:
		return checkSlice(path, v, t)
	case reflect.Map:
		return checkMap(path, v, t)
	}
	return checkScalar(path, v, t)
}

// checkStruct checks a JSON object against struct type t, member by
// member (jsonFields); members t does not have are allowed.
func checkStruct(path string, v any, t reflect.Type) (string, string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return path, "want object, got " + kindOf(v)
	}
	for _, f := range jsonFields(t) {
		if fv, present := obj[f.name]; present {
			if p, msg := check(join(path, f.name), fv, f.typ); msg != "" {
				return p, msg
			}
		}
	}
	return "", ""
}

// checkSlice checks a JSON array against slice type t, element by element.
func checkSlice(path string, v any, t reflect.Type) (string, string) {
	arr, ok := v.([]any)
	if !ok {
		return path, "want array, got " + kindOf(v)
	}
	for i, e := range arr {
		if p, msg := check(path+"["+strconv.Itoa(i)+"]", e, t.Elem()); msg != "" {
			return p, msg
		}
	}
	return "", ""
}

// checkMap checks a JSON object against map type t, value by value in the
// order of their keys (so that the first error is always the same one).
func checkMap(path string, v any, t reflect.Type) (string, string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return path, "want object, got " + kindOf(v)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, msg := check(join(path, k), obj[k], t.Elem()); msg != "" {
			return p, msg
		}
	}
	return "", ""
}

// checkScalar checks a JSON string, boolean or number against t.
func checkScalar(path string, v any, t reflect.Type) (string, string) {
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return path, "want string, got " + kindOf(v)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return path, "want boolean, got " + kindOf(v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return path, "want integer, got " + kindOf(v)
		}
		if _, err := strconv.ParseInt(n.String(), 10, t.Bits()); err != nil {
			return path, "want integer, got " + n.String()
		}
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return path, "want number, got " + kindOf(v)
		}
		if _, err := strconv.ParseFloat(n.String(), t.Bits()); err != nil {
			return path, "want number, got " + n.String() + " (out of range)"
		}
	}
	return "", ""
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonField is one JSON member of a struct type: its name and the Go type
// its value decodes into.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFieldCache holds jsonFields' answer per struct type.
var jsonFieldCache sync.Map // reflect.Type → []jsonField

// jsonFields lists the JSON members of struct type t as encoding/json
// sees them, in field order: the fields of an embedded struct without a
// JSON name are the outer struct's own (document.Run's record.Run,
// document.Level's record.Observations), and of several fields under one
// name the shallowest wins (document.Level.Warnings over
// record.Observations.Warnings), a tagged one over an untagged one at the
// same depth, and none where that leaves a tie.
func jsonFields(t reflect.Type) []jsonField {
	if fs, ok := jsonFieldCache.Load(t); ok {
		return fs.([]jsonField)
	}
	var all []candidate
	collectFields(t, 0, &all)
	best := map[string]candidate{}
	tied := map[string]bool{}
	for _, c := range all {
		b, seen := best[c.name]
		switch {
		case !seen || c.depth < b.depth || (c.depth == b.depth && c.tagged && !b.tagged):
			best[c.name], tied[c.name] = c, false
		case c.depth == b.depth && c.tagged == b.tagged:
			tied[c.name] = true
		}
	}
	var fs []jsonField
	for _, c := range all {
		if b := best[c.name]; !tied[c.name] && b.depth == c.depth && b.index == c.index {
			fs = append(fs, jsonField{c.name, c.typ})
		}
	}
	jsonFieldCache.Store(t, fs)
	return fs
}

// candidate is a struct field that may be a JSON member: at depth levels
// of embedding, the index-th found, tagged when its tag names it.
type candidate struct {
	jsonField
	depth, index int
	tagged       bool
}

// collectFields appends to out the candidate members of struct type t at
// depth, descending into embedded structs that have no JSON name.
func collectFields(t reflect.Type, depth int, out *[]candidate) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, depth+1, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		c := candidate{jsonField: jsonField{name, f.Type}, depth: depth, index: len(*out), tagged: name != ""}
		if name == "" {
			c.name = f.Name
		}
		*out = append(*out, c)
	}
}

func wantOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func keyList(obj map[string]any) string {
	if len(obj) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, strconv.Quote(k))
	}
	sort.Strings(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], "…")
	}
	return strings.Join(keys, ", ")
}
