// Rotary position embedding (mx.fast.rope) of a dense [..., t_len, dim] input: one invocation
// per rotated pair of a row, then one per untouched trailing feature (copied). Position of row
// r: (r % t_len + offset[r / per_batch]) * scale; pair j turns by position * inv_freq(j), with
// inv_freq(j) = 1 / freqs[j] when freqs are given, else exp(-j * coef) (coef = log(base) / half).
// traditional: pairs (2j, 2j+1); else (j, j + half). Rounds to T where cpu/fast.rs rounds.
// A scalar offset the host holds (a decode step's position) comes as the push constant
// `off_value` (`off_const` = 1) instead of a buffer, so it needs no upload.
// A second input x2 (`rows2` rows, `per_batch2`, offset `off_x2`) rotated with the same
// parameters goes to o2 in the same dispatch (a layer's queries and keys; rows2 = 0: none).
// With KV defined (rope_kv.comp) the keys are also written into their window of a KV-cache
// buffer (kc, `kc_row` elements between rows, from `kc_off`) and `v_rows` rows of values
// (dense in x from `v_off`, rows of dim) are copied into theirs (vc): a decode step's rope and
// KV-cache write in one dispatch, each value stored as the separate copy stores it.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer X { T x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Off { int offs[]; };
layout(std430, set = 0, binding = 2) readonly buffer F { float freqs[]; };
layout(std430, set = 0, binding = 3) readonly buffer X2 { T x2[]; };
layout(std430, set = 0, binding = 4) writeonly buffer O { T o[]; };
layout(std430, set = 0, binding = 5) writeonly buffer O2 { T o2[]; };
#ifdef KV
layout(std430, set = 0, binding = 6) writeonly buffer KC { T kc[]; };
layout(std430, set = 0, binding = 7) writeonly buffer VC { T vc[]; };
#endif
layout(push_constant) uniform P {
    uint rows; uint dim; uint dims; uint t_len; uint per_batch; uint off_x; uint traditional;
    uint off_o; uint o_step; uint off_f; uint f_step; uint has_freqs; float coef; float scale;
    uint off_const; int off_value; uint rows2; uint per_batch2; uint off_x2;
#ifdef KV
    uint kc_off; uint kc_row; uint vc_off; uint vc_row; uint v_off; uint v_rows;
#endif
} p;

float rt(float v) { return float(T(v)); }

// Element i of the first (second = false) or second input.
float xin(bool second, uint i) { return second ? float(x2[p.off_x2 + i]) : float(x[p.off_x + i]); }
void put(bool second, uint i, float v) {
    if (second) {
        o2[i] = T(v);
#ifdef KV
        kc[p.kc_off + (i / p.dim) * p.kc_row + i % p.dim] = T(v);
#endif
    } else {
        o[i] = T(v);
    }
}

void main() {
    uint half_ = p.dims / 2;
    uint per_row = half_ + (p.dim - p.dims);
    uint id = linear_id(256);
    bool second = id >= p.rows * per_row;
    if (second) id -= p.rows * per_row;
#ifdef KV
    // Past both ropes: the values' copy, one invocation an element.
    if (second && id >= p.rows2 * per_row) {
        uint i = id - p.rows2 * per_row;
        if (i < p.v_rows * p.dim) vc[p.vc_off + (i / p.dim) * p.vc_row + i % p.dim] = x[p.v_off + i];
        return;
    }
#endif
    if (id >= (second ? p.rows2 : p.rows) * per_row) return;
    uint per_batch = second ? p.per_batch2 : p.per_batch;
    uint row = id / per_row;
    uint c = id % per_row;
    uint base = row * p.dim;
    if (c >= half_) {
        uint k = p.dims + (c - half_);
        put(second, base + k, xin(second, base + k));
        return;
    }
    uint j = c;
    int ofs = p.off_const != 0 ? p.off_value : offs[p.off_o + (row / per_batch) * p.o_step];
    float pos = (float(row % p.t_len) + float(ofs)) * p.scale;
    float inv = p.has_freqs != 0 ? 1.0 / freqs[p.off_f + j * p.f_step] : exp(-float(j) * p.coef);
    float theta = pos * inv;
    float cs = rt(cos(theta));
    float sn = rt(sin(theta));
    uint i1 = p.traditional != 0 ? 2 * j : j;
    uint i2 = p.traditional != 0 ? 2 * j + 1 : j + half_;
    float v1 = xin(second, base + i1);
    float v2 = xin(second, base + i2);
    put(second, base + i1, rt(v1 * cs) - rt(v2 * sn));
    put(second, base + i2, rt(v1 * sn) + rt(v2 * cs));
}
