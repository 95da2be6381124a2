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
		obj, ok := v.(map[string]any)
		if !ok {
			return path, "want object, got " + kindOf(v)
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name := jsonName(f)
			if name == "" {
				continue
			}
			if fv, present := obj[name]; present {
				if p, msg := check(join(path, name), fv, f.Type); msg != "" {
					return p, msg
				}
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return path, "want array, got " + kindOf(v)
		}
		for i, e := range arr {
			if p, msg := check(path+"["+strconv.Itoa(i)+"]", e, t.Elem()); msg != "" {
				return p, msg
			}
		}
	case reflect.Map:
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

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
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
