package telemetry

import (
	"github.com/servebench/servebench/internal/ptr"
	"strings"
	"testing"
)

func TestParseSlots(t *testing.T) {
	tests := []struct {
		name, body string
		want       *float64
		wantErr    bool
	}{
		{name: "capture: one slot processing", body: readBackendTestdata(t, "llamacpp-b9014-slots.json"), want: f64(1)},
		{name: "two of three busy", body: `[{"id":0,"is_processing":true},{"id":1,"is_processing":false},{"id":2,"is_processing":true}]`, want: f64(2)},
		{name: "no is_processing", body: `[{"id":0}]`, wantErr: true},
		{name: "error object", body: `{"error":{"code":501,"message":"This server does not support slots endpoint."}}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSlots(strings.NewReader(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !ptr.Equal(s.Running, tc.want) {
				t.Fatalf("Running = %s, want %s", show(s.Running), show(tc.want))
			}
		})
	}
}

// FuzzSlots feeds arbitrary bodies to the /slots parser: no panic, and a
// busy count is a non-negative whole number.
func FuzzSlots(f *testing.F) {
	f.Add(readBackendTestdata(f, "llamacpp-b9014-slots.json"))
	f.Add(`[{"is_processing":false},{"is_processing":true}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		s, err := parseSlots(strings.NewReader(body))
		if err == nil && (s.Running == nil || *s.Running < 0 || *s.Running != float64(int(*s.Running))) {
			t.Fatalf("busy slots %s", show(s.Running))
		}
	})
}
