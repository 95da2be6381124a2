package telemetry

import (
	"github.com/servebench/servebench/internal/ptr"
	"reflect"
	"strings"
	"testing"
)

// TestParseQueryGPUCaptures reads real `nvidia-smi --query-gpu=<every
// field> --format=csv` outputs (header and " MiB" units) and finds the four
// fields servebench needs among ~200 columns.
func TestParseQueryGPUCaptures(t *testing.T) {
	tests := []struct {
		file string
		want GPUReading
	}{
		{"nvidia-smi-query-gpu-h100.csv", GPUReading{Index: 0, Name: "NVIDIA H100 80GB HBM3", UsedMiB: 19818, TotalMiB: 81559, PowerW: ptr.To(631.95)}},
		{"nvidia-smi-query-gpu-l40s.csv", GPUReading{Index: 0, Name: "NVIDIA L40S", UsedMiB: 1235, TotalMiB: 46068, PowerW: ptr.To(110.23)}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ParseQueryGPU(readTestdata(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Fatalf("got %+v, want [%+v]", got, tc.want)
			}
		})
	}
}

// TestParseQueryGPUNoHeader reads the form servebench's sampler asks for
// (csv,noheader,nounits in QueryGPUFields order), including several GPUs
// and the -lms stream of repeated readings.
func TestParseQueryGPUNoHeader(t *testing.T) {
	tests := []struct {
		name, text string
		want       []GPUReading
		wantErr    bool
	}{
		{name: "one gpu", text: "0, NVIDIA L40S, 1235, 46068\n",
			want: []GPUReading{{0, "NVIDIA L40S", 1235, 46068, nil, nil}}},
		{name: "two readings of -lms", text: "0, NVIDIA L40S, 1235, 46068\n0, NVIDIA L40S, 1300, 46068\n",
			want: []GPUReading{{0, "NVIDIA L40S", 1235, 46068, nil, nil}, {0, "NVIDIA L40S", 1300, 46068, nil, nil}}},
		{name: "units kept", text: "1, NVIDIA H100 80GB HBM3, 19818 MiB, 81559 MiB",
			want: []GPUReading{{1, "NVIDIA H100 80GB HBM3", 19818, 81559, nil, nil}}},
		{name: "power", text: "0, NVIDIA H100 80GB HBM3, 19818, 81559, 631.95\n0, NVIDIA H100 80GB HBM3, 19818, 81559, [N/A]\n",
			want: []GPUReading{{0, "NVIDIA H100 80GB HBM3", 19818, 81559, ptr.To(631.95), nil}, {0, "NVIDIA H100 80GB HBM3", 19818, 81559, nil, nil}}},
		{name: "not supported", text: "0, NVIDIA Jetson, [N/A], [N/A]\n", wantErr: true},
		{name: "error text", text: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", wantErr: true},
		{name: "empty", text: "\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseQueryGPU(tc.text)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestParseTableCapture reads the default nvidia-smi table of the same H100
// session as nvidia-smi-query-gpu-h100.csv: same memory figures, and the three
// processes of its Processes section.
func TestParseTableCapture(t *testing.T) {
	gpus, procs, err := ParseTable(readTestdata(t, "nvidia-smi-table-h100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	query, err := ParseQueryGPU(readTestdata(t, "nvidia-smi-query-gpu-h100.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// The table's power column is not read: compare the memory fields.
	for i := range query {
		query[i].PowerW = nil
	}
	if !reflect.DeepEqual(gpus, query) {
		t.Errorf("table GPUs %+v, query-gpu %+v: the same session should agree", gpus, query)
	}
	want := []ProcessMemory{{0, 11327, 2566}, {0, 11328, 1542}, {0, 11345, 15690}}
	if !reflect.DeepEqual(procs, want) {
		t.Errorf("processes %+v, want %+v", procs, want)
	}
}

// TestParseComputeApps reads the per-process query (fixture in the
// documented format, see its header) with and without header and units.
func TestParseComputeApps(t *testing.T) {
	_, tableProcs, err := ParseTable(readTestdata(t, "nvidia-smi-table-h100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range tableProcs {
		tableProcs[i].GPU = -1
	}
	tests := []struct {
		name, text string
		want       []ProcessMemory
		wantErr    bool
	}{
		{name: "documented csv", text: readTestdata(t, "nvidia-smi-compute-apps.csv"), want: tableProcs},
		{name: "noheader,nounits", text: "11327, 2566\n11328, 1542\n11345, 15690\n", want: tableProcs},
		{name: "none running", text: "No running processes found\n"},
		{name: "bad pid", text: "x, 12\n", wantErr: true},
		{name: "not available", text: "4242, [N/A]\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseComputeApps(tc.text)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzNvidiaSMI feeds arbitrary text to the three nvidia-smi parsers: no
// panic, and every reading they return is a plausible one.
func FuzzNvidiaSMI(f *testing.F) {
	for _, name := range []string{"nvidia-smi-query-gpu-h100.csv", "nvidia-smi-query-gpu-l40s.csv", "nvidia-smi-table-h100.txt"} {
		f.Add(readTestdata(f, name))
	}
	f.Add(readTestdata(f, "nvidia-smi-compute-apps.csv"))
	f.Add("0, NVIDIA L40S, 1235, 46068\n")
	f.Add("index, name\n0, x, 1, 2\n")
	f.Fuzz(func(t *testing.T, text string) {
		gpus, _ := ParseQueryGPU(text)
		tg, procs, _ := ParseTable(text)
		apps, _ := ParseComputeApps(text)
		for _, g := range append(gpus, tg...) {
			if g.Index < 0 || g.UsedMiB < 0 || g.TotalMiB < 0 || strings.ContainsAny(g.Name, "\n") {
				t.Fatalf("implausible reading %+v", g)
			}
		}
		for _, p := range append(procs, apps...) {
			if p.PID <= 0 || p.UsedMiB < 0 {
				t.Fatalf("implausible process %+v", p)
			}
		}
	})
}
