package compare

import (
	"strings"
	"testing"

	"github.com/servebench/servebench/report"
)

func TestParseRegression(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0.05": 0.05, " 12.5% ": 0.125, "0%": 0} {
		if got, err := ParseRegression(in); err != nil || got != want {
			t.Errorf("%q = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "five", "-1%", "2000%", "NaN"} {
		if _, err := ParseRegression(in); err == nil {
			t.Errorf("%q: want an error", in)
		}
	}
}

// TestGateTextVersusImage gates the image run of the reference example
// against its text run as baseline: throughput falls 46% (significant,
// Welch t-test) and the batch mean TPOT rises 85% (no test: not
// significant-only material). The other way round both improve.
func TestGateTextVersusImage(t *testing.T) {
	s := loadSeed(t, "vllm-text-image-example.json")
	text, image := s.Find("text"), s.Find("one_image_per_request")
	for _, tc := range []struct {
		name            string
		a, b            *report.Run
		max             float64
		significantOnly bool
		want            []string
	}{
		{"image vs text 5%", text, image, 0.05, false, []string{"throughput tok/s: 486.9 → 262.6 (-46.1%)", "mean TPOT ms (batch, incl. prefill): 8.215 → 15.23 (+85.4%)"}},
		{"significant only", text, image, 0.05, true, []string{"throughput tok/s"}},
		{"threshold above both", text, image, 0.9, false, nil},
		{"text vs image", image, text, 0.05, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Pair{Key: "k", A: tc.a, B: tc.b}
			got := Gate(p, Rows(p), tc.max, tc.significantOnly)
			if len(got) != len(tc.want) {
				t.Fatalf("breaches %v; want %d", got, len(tc.want))
			}
			for i, b := range got {
				if line := b.String(); !strings.Contains(line, tc.want[i]) || !strings.HasPrefix(line, "regression: k c=4 ") {
					t.Errorf("breach %d = %q; want %q", i, line, tc.want[i])
				}
			}
		})
	}
}
