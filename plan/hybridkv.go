package plan

import "github.com/servebench/servebench/modelspec"

// vllmHybridKVVersion is the first vLLM release whose hybrid KV-cache
// manager gives sliding-window and chunked-attention layers their own
// KV-cache groups by default (vllm/v1/core/kv_cache_utils.py,
// _get_kv_cache_groups_uniform_page_size); before it, and with
// --disable-hybrid-kv-cache-manager, they are counted as full attention.
var vllmHybridKVVersion = VLLMVersion{0, 10, 0}

// kvLayout is how vLLM lays out the KV cache of a model's layers: one
// group of all layers, or, for a model that mixes attention types, the
// hybrid manager's groups of equal size, each with its own block table
// over a shared pool of blocks.
type kvLayout struct {
	// groups lists each group's layer indices (over the whole model) and
	// kind.
	groups []kvGroup
}

// kvGroup is one KV-cache group: layers of one attention kind.
type kvGroup struct {
	kind   modelspec.LayerKind
	layers []int
}

// vllmKVLayout groups m's layers as vLLM's get_kv_cache_groups does.
// Layers of one kind form one group when every layer is alike. Otherwise
// the group size is the fewest layers of any kind (or the most, when
// that is under 1.5× the fewest: gpt-oss's 12 + 12), each kind is split
// into ceil(count / size) groups taking every n-th layer
// (layers[i::n]), and every group gets the same number of blocks. hybrid
// false (an old vLLM, or --disable-hybrid-kv-cache-manager) counts every
// layer as full attention.
func vllmKVLayout(m *modelspec.Spec, hybrid bool) kvLayout {
	byKind := map[modelspec.LayerKind][]int{}
	var kinds []modelspec.LayerKind
	for i := 0; i < m.Layers; i++ {
		k := m.Kind(i)
		if !hybrid || (k == modelspec.SlidingAttention && m.SlidingWindow <= 0) || (k == modelspec.ChunkedAttention && m.AttentionChunk <= 0) {
			k = modelspec.FullAttention
		}
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], i)
	}
	if len(kinds) == 1 {
		return kvLayout{groups: []kvGroup{{kinds[0], byKind[kinds[0]]}}}
	}
	fewest, most := m.Layers, 0
	for _, k := range kinds {
		fewest, most = min(fewest, len(byKind[k])), max(most, len(byKind[k]))
	}
	size := fewest
	if float64(most) < 1.5*float64(fewest) {
		size = most
	}
	var l kvLayout
	for _, k := range kinds {
		layers := byKind[k]
		n := (len(layers) + size - 1) / size
		for j := 0; j < n; j++ {
			var g []int
			for x := j; x < len(layers); x += n {
				g = append(g, layers[x])
			}
			l.groups = append(l.groups, kvGroup{k, g})
		}
	}
	return l
}

// hybrid reports whether the layout has more than one group.
func (l kvLayout) hybrid() bool { return len(l.groups) > 1 }

// groupSize is how many layers of one group a worker holding layers
// [first, first+n) has at most: its KV memory is that many layers' pages
// per block (vllm get_kv_cache_config_from_groups, after
// _project_kv_cache_groups_to_worker for pipeline stages).
func (l kvLayout) groupSize(first, n int) int {
	size := 0
	for _, g := range l.groups {
		c := 0
		for _, i := range g.layers {
			if i >= first && i < first+n {
				c++
			}
		}
		size = max(size, c)
	}
	return size
}

// blocksPerSequence is how many blocks one sequence of maxLen tokens
// takes over all groups (vLLM's max_memory_usage_bytes per group): full
// attention ⌈maxLen/bs⌉; a sliding window W ⌈min(W−1+batched, maxLen)/bs⌉
// + 1; a chunk C ⌈min(C+batched, maxLen)/bs⌉.
func (l kvLayout) blocksPerSequence(m *modelspec.Spec, maxLen, batched, bs int) int {
	cdiv := func(a, b int) int { return (a + b - 1) / b }
	total := 0
	for _, g := range l.groups {
		switch g.kind {
		case modelspec.SlidingAttention:
			total += cdiv(min(m.SlidingWindow-1+batched, maxLen), bs) + 1
		case modelspec.ChunkedAttention:
			total += cdiv(min(m.AttentionChunk+batched, maxLen), bs)
		default:
			total += cdiv(maxLen, bs)
		}
	}
	return total
}

// tokens is the "GPU KV cache size" vLLM prints for blocks: blocks ×
// block size for one group, blocks / groups × block size for several
// (_report_kv_cache_config).
func (l kvLayout) tokens(blocks, bs int) int {
	if len(l.groups) <= 1 {
		return blocks * bs
	}
	return blocks / len(l.groups) * bs
}
