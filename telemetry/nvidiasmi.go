package telemetry

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// GPUReading is one memory reading of one device, in MiB (2^20 bytes) as
// nvidia-smi and NVML report them.
type GPUReading struct {
	// Index is the device's nvidia-smi / NVML index.
	Index int
	// Name is the device name, e.g. "NVIDIA H100 80GB HBM3".
	Name string
	// UsedMiB is memory in use on the device by all processes.
	UsedMiB float64
	// TotalMiB is the device's memory size.
	TotalMiB float64
	// PowerW is the board's power draw in watts (nvidia-smi power.draw,
	// NVML power usage); nil where the source has none ("[N/A]").
	PowerW *float64
	// EnergyJ is NVML's total energy counter in joules (energy since the
	// driver loaded); nil elsewhere.
	EnergyJ *float64
}

// ProcessMemory is the GPU memory one process holds, in MiB.
type ProcessMemory struct {
	// GPU is the device index, or -1 where the source does not say.
	GPU int
	PID int
	// UsedMiB is the process's used GPU memory.
	UsedMiB float64
}

// QueryGPUFields is the --query-gpu field list servebench asks for; a
// headerless line of `--format=csv,noheader,nounits` has these columns in
// this order.
var QueryGPUFields = []string{"index", "name", "memory.used", "memory.total", "power.draw"}

// gpuColumns locates the fields of a GPUReading in a CSV header; power
// is -1 when the header has no power.draw.
type gpuColumns struct{ index, name, used, total, power int }

// defaultGPUColumns is the order of QueryGPUFields.
var defaultGPUColumns = gpuColumns{0, 1, 2, 3, 4}

// splitCSV splits one nvidia-smi CSV line. nvidia-smi neither quotes nor
// escapes, and separates fields with ", ".
func splitCSV(line string) []string {
	f := strings.Split(line, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	return f
}

// headerColumns reads a --format=csv header ("index, name, memory.used
// [MiB], ..."), dropping unit suffixes; ok is false if line is not a
// header with the four fields.
func headerColumns(line string) (gpuColumns, bool) {
	c := gpuColumns{-1, -1, -1, -1, -1}
	for i, f := range splitCSV(line) {
		if j := strings.IndexByte(f, '['); j >= 0 {
			f = strings.TrimSpace(f[:j])
		}
		switch f {
		case "index":
			c.index = i
		case "name":
			c.name = i
		case "memory.used":
			c.used = i
		case "memory.total":
			c.total = i
		case "power.draw":
			c.power = i
		}
	}
	return c, c.index >= 0 && c.name >= 0 && c.used >= 0 && c.total >= 0
}

// parseMiB reads "19818" or "19818 MiB"; "[N/A]" and other text fail.
func parseMiB(s string) (float64, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "MiB"))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v != v || v > 1<<40 {
		return 0, fmt.Errorf("not a MiB value: %q", s)
	}
	return v, nil
}

// parseGPULine reads one data line with the columns c.
func parseGPULine(line string, c gpuColumns) (GPUReading, error) {
	f := splitCSV(line)
	need := max(c.index, c.name, c.used, c.total)
	if len(f) <= need {
		return GPUReading{}, fmt.Errorf("nvidia-smi: %d fields, want at least %d: %q", len(f), need+1, line)
	}
	idx, err := strconv.Atoi(f[c.index])
	if err != nil || idx < 0 {
		return GPUReading{}, fmt.Errorf("nvidia-smi: bad index %q", f[c.index])
	}
	used, err := parseMiB(f[c.used])
	if err != nil {
		return GPUReading{}, fmt.Errorf("nvidia-smi: memory.used: %w", err)
	}
	total, err := parseMiB(f[c.total])
	if err != nil {
		return GPUReading{}, fmt.Errorf("nvidia-smi: memory.total: %w", err)
	}
	r := GPUReading{Index: idx, Name: f[c.name], UsedMiB: used, TotalMiB: total}
	if c.power >= 0 && c.power < len(f) {
		r.PowerW = parseWatts(f[c.power])
	}
	return r, nil
}

// parseWatts reads "631.95" or "631.95 W"; "[N/A]", "[Not Supported]"
// and other text are nil (a board without a power sensor).
func parseWatts(s string) *float64 {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "W"))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v < 1e5) {
		return nil
	}
	return &v
}

// ParseQueryGPU reads the output of `nvidia-smi --query-gpu=...
// --format=csv[,noheader][,nounits]`: either a header naming the columns
// (any field list that includes index, name, memory.used and memory.total,
// values with or without " MiB") or headerless lines in the order of
// QueryGPUFields. Blank lines are skipped; the first bad line is an error.
func ParseQueryGPU(text string) ([]GPUReading, error) {
	cols := defaultGPUColumns
	var out []GPUReading
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if c, ok := headerColumns(line); ok {
			cols = c
			continue
		}
		r, err := parseGPULine(line, cols)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseComputeApps reads `nvidia-smi --query-compute-apps=pid,used_memory
// --format=csv[,noheader][,nounits]` (header "pid, used_gpu_memory [MiB]"
// or none). GPU is -1: this query does not name the device.
func ParseComputeApps(text string) ([]ProcessMemory, error) {
	pidCol, memCol := 0, 1
	var out []ProcessMemory
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "No running") {
			continue
		}
		f := splitCSV(line)
		if f[0] == "pid" {
			for i, h := range f {
				if strings.HasPrefix(h, "used_gpu_memory") || strings.HasPrefix(h, "used_memory") {
					memCol = i
				}
			}
			continue
		}
		if len(f) <= max(pidCol, memCol) {
			return out, fmt.Errorf("nvidia-smi compute-apps: %d fields: %q", len(f), line)
		}
		pid, err := strconv.Atoi(f[pidCol])
		if err != nil || pid <= 0 {
			return out, fmt.Errorf("nvidia-smi compute-apps: bad pid %q", f[pidCol])
		}
		mem, err := parseMiB(f[memCol])
		if err != nil {
			return out, fmt.Errorf("nvidia-smi compute-apps: used_memory: %w", err)
		}
		out = append(out, ProcessMemory{GPU: -1, PID: pid, UsedMiB: mem})
	}
	return out, nil
}

var (
	// "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:00:09.0 Off |"
	tableGPURow = regexp.MustCompile(`^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|`)
	// "| N/A   59C    P0    629W /  700W |   19818MiB /  81559MiB |"
	tableMemRow = regexp.MustCompile(`\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|`)
	// "|    0   N/A  N/A           11327      C   /root/tools/memhog    2566MiB |"
	tableProcRow = regexp.MustCompile(`^\|\s+(\d+)\s+\S+\s+\S+\s+(\d+)\s+[CGM+]+\s+.*?\s(\d+)MiB\s*\|$`)
)

// ParseTable reads nvidia-smi's default table: each GPU's index, name and
// memory (the "19818MiB / 81559MiB" cell of the row under its name) and the
// Processes section (GPU, PID, used memory).
func ParseTable(text string) ([]GPUReading, []ProcessMemory, error) {
	var gpus []GPUReading
	var procs []ProcessMemory
	pending := -1 // index into gpus of a row still waiting for its memory cell
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \r")
		if m := tableProcRow.FindStringSubmatch(line); m != nil {
			gpu, _ := strconv.Atoi(m[1])
			pid, _ := strconv.Atoi(m[2])
			mem, err := parseMiB(m[3])
			if err != nil || pid <= 0 {
				continue
			}
			procs = append(procs, ProcessMemory{GPU: gpu, PID: pid, UsedMiB: mem})
			continue
		}
		if m := tableGPURow.FindStringSubmatch(line); m != nil {
			idx, err := strconv.Atoi(m[1])
			if err != nil {
				continue
			}
			gpus = append(gpus, GPUReading{Index: idx, Name: m[2], UsedMiB: -1})
			pending = len(gpus) - 1
			continue
		}
		if m := tableMemRow.FindStringSubmatch(line); m != nil && pending >= 0 {
			used, err1 := parseMiB(m[1])
			total, err2 := parseMiB(m[2])
			if err1 == nil && err2 == nil {
				gpus[pending].UsedMiB, gpus[pending].TotalMiB = used, total
			}
			pending = -1
		}
	}
	out := gpus[:0]
	for _, g := range gpus {
		if g.UsedMiB >= 0 {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil, procs, fmt.Errorf("nvidia-smi table: no GPU row with a memory cell")
	}
	return out, procs, nil
}
