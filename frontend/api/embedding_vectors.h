// embedding_vectors.h: what the API layer does to a pooled vector before it goes on the wire:
// Matryoshka truncation to `dimensions`, then L2 normalisation (in that order, as
// sentence-transformers' truncate_dim and OpenAI's text-embedding-3 do, so a truncated vector is
// unit-norm again), and OpenAI's base64 form (the f32 values' little-endian bytes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace radiance::frontend {

// The first `dims` values (all when dims <= 0 or larger), scaled to unit L2 norm when `normalize`
// (a zero vector stays zero).
std::vector<float> finish_embedding(const std::vector<float>& pooled, int64_t dims, bool normalize);

// Standard base64 (RFC 4648, padded) of the floats' little-endian IEEE-754 bytes.
std::string embedding_base64(const std::vector<float>& v);

}  // namespace radiance::frontend
