package stats

import (
	"reflect"
	"testing"

	"github.com/servebench/servebench/record"
)

// TestLevelMemo: a second Level of an unchanged Accumulator is the first,
// owned by its caller (writing through its pointers changes neither the
// memo nor a later Level), and an Add or new Options summarize afresh.
func TestLevelMemo(t *testing.T) {
	a := benchAccumulator(120)
	first := a.Level()
	fresh := a.summarize()
	if !reflect.DeepEqual(first, fresh) {
		t.Fatal("the memo's summary differs from a fresh one")
	}
	*first.TTFTP95Ms = -1
	first.OneSided = nil
	second := a.Level()
	if !reflect.DeepEqual(second, fresh) {
		t.Fatal("writing through the first summary's pointers changed the second")
	}
	if second.TTFTP95Ms == fresh.TTFTP95Ms {
		t.Fatal("two summaries share a pointer")
	}
	cases := []struct {
		name   string
		change func(a *Accumulator)
	}{
		{"add", func(a *Accumulator) { a.Add(ptrResult(ok(4, 1e6, 900, 2000, 40, 500))) }},
		{"confidence", func(a *Accumulator) { a.Options.Confidence = 0.9 }},
		{"budget", func(a *Accumulator) { a.Options.Budget = &record.GoodputBudget{TTFTMs: fp(50)} }},
		{"budget value", func(a *Accumulator) { *a.Options.Budget.TTFTMs = 60 }},
	}
	for _, c := range cases {
		before := a.Level()
		c.change(a)
		after := a.Level()
		if !reflect.DeepEqual(after, a.summarize()) {
			t.Errorf("%s: the summary after it is not a fresh one", c.name)
		}
		if reflect.DeepEqual(before, after) {
			t.Errorf("%s: the summary did not change", c.name)
		}
	}
}
