package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// smiSource reads GPU memory by running nvidia-smi (argument lists, never a
// shell).
type smiSource struct {
	path  string
	index int
}

// openSMI finds nvidia-smi on PATH.
func openSMI(index int) (gpuSource, error) {
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi: %w", err)
	}
	return &smiSource{path: path, index: index}, nil
}

func (s *smiSource) name() string { return "nvidia-smi" }
func (s *smiSource) close()       {}

// queryArgs is the --query-gpu command line for device s.index.
func (s *smiSource) queryArgs() []string {
	return []string{"--query-gpu=" + strings.Join(QueryGPUFields, ","), "--format=csv,noheader,nounits", "-i", strconv.Itoa(s.index)}
}

// run runs nvidia-smi once and returns its stdout; stderr goes into the
// error.
func (s *smiSource) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String() + " " + string(out))
		return "", fmt.Errorf("%v: %s", err, firstLine(msg))
	}
	return string(out), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (s *smiSource) read(ctx context.Context) (GPUReading, error) {
	out, err := s.run(ctx, s.queryArgs()...)
	if err != nil {
		return GPUReading{}, err
	}
	rs, err := ParseQueryGPU(out)
	if err != nil {
		return GPUReading{}, err
	}
	for _, r := range rs {
		if r.Index == s.index {
			return r, nil
		}
	}
	return GPUReading{}, fmt.Errorf("no reading of GPU %d in %q", s.index, firstLine(out))
}

// stream runs `nvidia-smi ... -lms N` as one child process for the whole
// level and parses each line as it comes; the child is killed when ctx is
// done.
func (s *smiSource) stream(ctx context.Context, interval time.Duration, emit func(GPUReading)) error {
	ms := max(interval.Milliseconds(), 1)
	args := append(s.queryArgs(), "-lms", strconv.FormatInt(ms, 10))
	cmd := exec.CommandContext(ctx, s.path, args...)
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	var parseErr error
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		r, err := parseGPULine(line, defaultGPUColumns)
		if err != nil {
			if parseErr == nil {
				parseErr = err
			}
			continue
		}
		if r.Index == s.index {
			emit(r)
		}
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil // stopped with the level
	}
	if werr != nil {
		return fmt.Errorf("nvidia-smi -lms exited: %v: %s", werr, firstLine(strings.TrimSpace(stderr.String())))
	}
	if parseErr != nil {
		return parseErr
	}
	return fmt.Errorf("nvidia-smi -lms exited early")
}

func (s *smiSource) processes(ctx context.Context) ([]ProcessMemory, error) {
	out, err := s.run(ctx, "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits")
	if err != nil {
		return nil, err
	}
	return ParseComputeApps(out)
}
