package backend

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDescriptors: every Kind has a descriptor with its required fields,
// the ports discovery, launch and the simulated server use do not collide
// where they must not, and each family's facts hold together.
func TestDescriptors(t *testing.T) {
	if len(Kinds) != len(families) || len(Kinds) == 0 {
		t.Fatalf("Kinds %v, %d descriptors", Kinds, len(families))
	}
	usual := map[int]Kind{}
	for _, k := range Kinds {
		d, ok := describe(k)
		if !ok {
			t.Fatalf("%s has no descriptor", k)
		}
		checkDescriptor(t, d)
		if got, err := ParseKind(string(k)); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
		if len(d.Ports) == 0 {
			if !d.Generic {
				t.Errorf("%s: no port, and not a generic family", k)
			}
			continue
		}
		if o, dup := usual[d.Ports[0]]; dup && !ownsAPort(o) && !ownsAPort(k) {
			t.Errorf("%s and %s share the usual port %d, and neither has a port of its own", o, k, d.Ports[0])
		}
		usual[d.Ports[0]] = k
		for i, p := range d.Ports {
			if p <= 0 || p > 65535 || slices.Index(d.Ports, p) != i {
				t.Errorf("%s: ports %v: each must be 1–65535 and listed once", k, d.Ports)
			}
		}
	}
	if _, err := ParseKind("nonesuch"); err == nil || !strings.Contains(err.Error(), "vllm") {
		t.Errorf("ParseKind(nonesuch) = %v, want an error listing the Kinds", err)
	}
}

// ownsAPort tells whether k lists a port no other family lists: two
// families may share a usual port (TGI's container is mapped to
// llama.cpp's 8080) only when one of them can still be told apart by a
// port of its own (TGI's launcher default 3000).
func ownsAPort(k Kind) bool {
	for _, p := range k.Describe().Ports {
		n := 0
		for _, o := range Kinds {
			if slices.Contains(o.Describe().Ports, p) {
				n++
			}
		}
		if n == 1 {
			return true
		}
	}
	return false
}

// checkDescriptor checks one descriptor's required fields.
func checkDescriptor(t *testing.T, d *Descriptor) {
	t.Helper()
	k := d.Kind
	switch {
	case d.Name == "" || d.Health == "" || !strings.HasPrefix(d.Health, "/"):
		t.Errorf("%s: Name %q, Health %q: both required, Health a path", k, d.Name, d.Health)
	case len(d.APIs) < 2:
		t.Errorf("%s: APIs %v: want a default and an alternative", k, d.APIs)
	case d.probe == nil || d.client == nil:
		t.Errorf("%s: no probe or no client", k)
	case d.Weights == "":
		t.Errorf("%s: no weight format", k)
	case d.EOS == EOSNone && d.eosWarning == "":
		t.Errorf("%s: no ignore-EOS, and no warning that says so", k)
	}
	for _, api := range d.APIs {
		if p := d.Paths[api]; !strings.HasPrefix(p, "/") {
			t.Errorf("%s: API %s has path %q", k, api, p)
		}
	}
	if d.Version.Path != "" && (d.Version.Field == "" || !strings.HasPrefix(d.Version.Path, "/")) {
		t.Errorf("%s: version endpoint %+v", k, d.Version)
	}
	if tk := d.Tokenizer; tk != nil && (tk.Path == "" || tk.Field == "" || tk.Body == nil || len(tk.Body("m", "t")) == 0) {
		t.Errorf("%s: tokenizer %+v incomplete", k, tk)
	}
	if d.Log != "" {
		if _, ok := describe(d.Log); !ok {
			t.Errorf("%s: log format %q is not a Kind", k, d.Log)
		}
	}
	if m, ok := MetricsFor(k); ok && len(m.Running) == 0 {
		t.Errorf("%s: metrics without a running-requests gauge", k)
	}
}

// TestLocalServers: discovery looks at every family's ports, each address
// once, each family's usual port first.
func TestLocalServers(t *testing.T) {
	cands := LocalServers()
	var urls []string
	for _, c := range cands {
		if slices.Contains(urls, c.URL) {
			t.Errorf("%s listed twice", c.URL)
		}
		urls = append(urls, c.URL)
	}
	// The usual ports of the families servebench had before the
	// descriptors, in the order it has always looked at them (each
	// family's usual port first, then TGI's launcher port); a family added
	// since may come anywhere.
	want := []string{"http://127.0.0.1:8000", "http://127.0.0.1:30000", "http://127.0.0.1:8080", "http://127.0.0.1:11434", "http://127.0.0.1:3000"}
	var known []string
	for _, u := range urls {
		if slices.Contains(want, u) {
			known = append(known, u)
		}
	}
	if !slices.Equal(known, want) {
		t.Errorf("LocalServers %v, want %v in that order", urls, want)
	}
	for _, k := range Kinds {
		for _, p := range k.Describe().Ports {
			i := slices.IndexFunc(cands, func(c Candidate) bool { return strings.HasSuffix(c.URL, ":"+strconv.Itoa(p)) })
			if i < 0 || !slices.Contains(cands[i].Kinds, k) {
				t.Errorf("%s's port %d not looked at for it", k, p)
			}
		}
	}
}
