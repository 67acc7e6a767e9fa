// Writes a few valid containers into a folder: the seed corpus of container_fuzz.
#include <cstring>
#include <string>
#include <vector>

#include "radiance/container/container.h"

using namespace radiance::container;

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    std::string dir = argv[1];
    for (int k = 0; k < 3; ++k) {
        Writer w(dir + "/seed" + std::to_string(k) + ".rad");
        w.set_meta("general.architecture", MetaValue::of_str("llama"));
        w.set_meta("n", MetaValue::of_int(k));
        RadEncoding q = rad_encoding_plain(RAD_U4);
        q.n_planes = 2;
        std::strcpy(q.planes[1].role, "scale");
        q.planes[1].kind = RAD_PLANE_TILED;
        q.planes[1].dtype = RAD_F16;
        q.planes[1].block_r = 1;
        q.planes[1].block_c = 16;
        uint32_t e = w.add_encoding(k == 1 ? q : rad_encoding_plain(RAD_BF16));
        int64_t rows = 2 + k, cols = 32;
        std::vector<uint8_t> a(k == 1 ? rows * cols / 2 : rows * cols * 2, 7), s(rows * 2 * 2, 3);
        if (k == 1)
            w.add_tensor("w", e, {rows, cols}, RAD_F32, {a, s});
        else
            w.add_tensor("w", e, {rows, cols}, RAD_BF16, {a});
        w.set_blob(Section::Tokenizer, "{}");
        w.finish();
    }
    return 0;
}
