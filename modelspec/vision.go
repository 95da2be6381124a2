package modelspec

import (
	"encoding/json"
	"fmt"
)

// VisionSpec is the vision encoder of a vision-language model, from the
// vision_config of its config.json: what the planner needs for the
// encoder's weights and for the activation peak of the largest image a
// server profiles with.
type VisionSpec struct {
	// Depth is the number of encoder blocks (depth, num_hidden_layers).
	Depth int `json:"depth"`
	// Hidden is the encoder width (hidden_size; embed_dim in Qwen2-VL,
	// whose hidden_size is the language model's).
	Hidden int `json:"hidden_size"`
	// Intermediate is the encoder MLP width (intermediate_size; embed_dim
	// × mlp_ratio in Qwen2-VL).
	Intermediate int `json:"intermediate_size"`
	// Heads is the number of attention heads.
	Heads int `json:"num_heads"`
	// PatchSize is the side of a patch in pixels.
	PatchSize int `json:"patch_size"`
	// Channels is the image channels (3).
	Channels int `json:"in_channels"`
	// ImageSize is the fixed input side in pixels of a fixed-resolution
	// encoder (SigLIP in Gemma 3: 896; Llama 4: 336 per tile); 0 for a
	// dynamic-resolution one.
	ImageSize int `json:"image_size,omitempty"`
	// MaxPixels is the largest image (width × height) a
	// dynamic-resolution encoder takes: the image processor's max_pixels
	// (Qwen2-VL and Qwen2.5-VL: 12,845,056 = 3584², preprocessor_config.json).
	MaxPixels int `json:"max_pixels,omitempty"`
	// SpatialMerge merges SpatialMerge² neighbouring patches into one
	// language-model token (Qwen2-VL spatial_merge_size 2); 0 or 1 = none.
	SpatialMerge int `json:"spatial_merge_size,omitempty"`
	// TemporalPatch is the frames one patch spans (Qwen2-VL
	// temporal_patch_size 2: an image is two identical frames); 0 or 1 = one.
	TemporalPatch int `json:"temporal_patch_size,omitempty"`
	// TokensPerImage is the language-model tokens one image (one tile)
	// becomes when it is not patches / SpatialMerge² (Gemma 3
	// mm_tokens_per_image 256; Llama 4: 144 per tile after its pixel
	// shuffle); 0 = patches / SpatialMerge².
	TokensPerImage int `json:"tokens_per_image,omitempty"`
	// MaxTiles is how many ImageSize tiles the largest image is cut into
	// (Llama 4's processor: up to 16 tiles plus a global one = 17); 0 or 1
	// = one.
	MaxTiles int `json:"max_tiles,omitempty"`
	// GatedMLP is true for a SwiGLU encoder MLP (gate, up, down: Qwen2.5-VL)
	// and false for a two-matrix GELU MLP (SigLIP, Qwen2-VL, Llama 4).
	GatedMLP bool `json:"gated_mlp,omitempty"`
}

// qwenVLMaxPixels is Qwen2-VL's and Qwen2.5-VL's image processor
// max_pixels (preprocessor_config.json: 12845056 = 16384 tokens of 28×28
// pixels).
const qwenVLMaxPixels = 12845056

// Patches is the encoder's sequence length for the largest image: every
// tile's (ImageSize / PatchSize)² patches, or a dynamic-resolution
// encoder's MaxPixels / PatchSize² patches (each spanning TemporalPatch
// frames).
func (v *VisionSpec) Patches() int {
	if v.PatchSize <= 0 {
		return 0
	}
	if v.ImageSize > 0 {
		side := v.ImageSize / v.PatchSize
		return side * side * max(v.MaxTiles, 1)
	}
	return v.MaxPixels / (v.PatchSize * v.PatchSize)
}

// Tokens is how many language-model tokens the largest image becomes.
func (v *VisionSpec) Tokens() int {
	if v.TokensPerImage > 0 {
		return v.TokensPerImage * max(v.MaxTiles, 1)
	}
	merge := max(v.SpatialMerge, 1)
	return v.Patches() / (merge * merge)
}

// PixelValues is how many pixel values one patch carries into the
// encoder (channels × frames × patch²).
func (v *VisionSpec) PixelValues() int {
	return max(v.Channels, 1) * max(v.TemporalPatch, 1) * v.PatchSize * v.PatchSize
}

// Params is the encoder's parameter count: per block q, k, v and o
// (4 × width²) and the MLP (2 or, gated, 3 × width × intermediate), plus
// the patch embedding. Projectors and position tables are left out (a
// few percent; the published total, when known, corrects the whole
// model's count).
func (v *VisionSpec) Params() int64 {
	h, i := int64(v.Hidden), int64(v.Intermediate)
	mlp := 2 * h * i
	if v.GatedMLP {
		mlp = 3 * h * i
	}
	return int64(v.Depth)*(4*h*h+mlp) + int64(v.PixelValues())*h
}

// validate checks the fields the planner divides or multiplies by.
func (v *VisionSpec) validate() error {
	for _, c := range []struct {
		f string
		v int
	}{{"depth", v.Depth}, {"hidden_size", v.Hidden}, {"intermediate_size", v.Intermediate}, {"patch_size", v.PatchSize}} {
		if c.v <= 0 || c.v > 1<<20 {
			return fmt.Errorf("vision_config: field %s = %d is missing or out of range", c.f, c.v)
		}
	}
	if v.ImageSize < 0 || v.MaxPixels < 0 || v.ImageSize > 1<<16 || v.MaxPixels > 1<<30 {
		return fmt.Errorf("vision_config: image size out of range")
	}
	if v.Patches() <= 0 || v.Patches() > 1<<22 {
		return fmt.Errorf("vision_config: %d patches per image is out of range", v.Patches())
	}
	return nil
}

// hfVisionConfig is the subset of a config.json vision_config the planner
// reads, under the spellings of Qwen2-VL/Qwen2.5-VL (depth, embed_dim,
// num_heads, spatial_merge_size), SigLIP/Gemma 3 and Llama 4
// (num_hidden_layers, hidden_size, image_size).
type hfVisionConfig struct {
	ModelType         string   `json:"model_type"`
	Depth             *int     `json:"depth"`
	NumHiddenLayers   *int     `json:"num_hidden_layers"`
	HiddenSize        *int     `json:"hidden_size"`
	EmbedDim          *int     `json:"embed_dim"`
	IntermediateSize  *int     `json:"intermediate_size"`
	MLPRatio          *float64 `json:"mlp_ratio"`
	NumHeads          *int     `json:"num_heads"`
	NumAttentionHeads *int     `json:"num_attention_heads"`
	PatchSize         *int     `json:"patch_size"`
	ImageSize         *int     `json:"image_size"`
	InChans           *int     `json:"in_chans"`
	InChannels        *int     `json:"in_channels"`
	NumChannels       *int     `json:"num_channels"`
	SpatialMergeSize  *int     `json:"spatial_merge_size"`
	TemporalPatchSize *int     `json:"temporal_patch_size"`
	PixelShuffleRatio *float64 `json:"pixel_shuffle_ratio"`
	HiddenAct         string   `json:"hidden_act"`
}

// parseVisionConfig reads a vision_config; parent is the outer model_type
// ("qwen2_5_vl", "gemma3", "llama4"), mmTokens the outer
// mm_tokens_per_image (Gemma 3) or 0.
func parseVisionConfig(raw json.RawMessage, parent string, mmTokens int) (*VisionSpec, error) {
	var c hfVisionConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("vision_config: %v", err)
	}
	first := func(ps ...*int) int {
		for _, p := range ps {
			if p != nil {
				return *p
			}
		}
		return 0
	}
	v := &VisionSpec{
		Depth:     first(c.Depth, c.NumHiddenLayers),
		Hidden:    first(c.EmbedDim, c.HiddenSize),
		Heads:     first(c.NumHeads, c.NumAttentionHeads),
		PatchSize: first(c.PatchSize),
		ImageSize: first(c.ImageSize),
		Channels:  first(c.InChans, c.InChannels, c.NumChannels),
	}
	if v.Channels == 0 {
		v.Channels = 3
	}
	v.Intermediate = first(c.IntermediateSize)
	if c.EmbedDim != nil && c.MLPRatio != nil {
		// Qwen2-VL: hidden_size is the merger's output, the ViT is embed_dim wide
		v.Intermediate = int(float64(*c.EmbedDim) * *c.MLPRatio)
	}
	switch {
	case parent == "qwen2_vl" || parent == "qwen2_5_vl" || c.SpatialMergeSize != nil:
		// dynamic resolution: no image_size, the processor's max_pixels
		v.ImageSize, v.MaxPixels = 0, qwenVLMaxPixels
		v.SpatialMerge, v.TemporalPatch = first(c.SpatialMergeSize), first(c.TemporalPatchSize)
		v.GatedMLP = parent == "qwen2_5_vl" || c.HiddenAct == "silu"
	case parent == "llama4" || c.ModelType == "llama4_vision_model":
		// 16 tiles plus a global one; the pixel shuffle keeps ratio² of the patches
		v.MaxTiles = 17
		if c.PixelShuffleRatio != nil && v.ImageSize > 0 && v.PatchSize > 0 {
			side := v.ImageSize / v.PatchSize
			v.TokensPerImage = int(float64(side*side) * *c.PixelShuffleRatio * *c.PixelShuffleRatio)
		}
	case mmTokens > 0:
		v.TokensPerImage = mmTokens
	}
	if v.Heads <= 0 {
		v.Heads = max(v.Hidden/64, 1)
	}
	if err := v.validate(); err != nil {
		return nil, err
	}
	return v, nil
}
