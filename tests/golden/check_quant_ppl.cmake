# ctest: the demo model converted by a recipe preset keeps its perplexity on its held-out chapters
# within MAX_REL of the unquantised model's: the value transformers computed when it was trained
# (models/demo/ppl_reference.json; rad-ppl reproduces it to 2e-7, check_ppl.cmake), on libcpu.
#   -DRAD_CONVERT= -DRAD_PPL= -DMODEL=models/demo -DPRESET=int8 -DMAX_REL=0.01 -DOUT=dir
#
# Measured (20000 tokens, libcpu avx512, the 2-core build VM): int8 106.0486 (-0.015%), fp8 106.0285
# (-0.034%), int4 106.3011 (+0.22%) against 106.0649. The demo's quantised layers are small next to
# its bf16 embedding, so every preset lands far inside the issue's bounds (1%, 3%, 12%); what the
# checks catch is a quantiser or a kernel that is wrong, not merely lossy. rad-ppl scores whole
# chunks as prompts, so on libcpu this is gemm_q's packed (prefill) kernel; its decode kernel meets a
# served model in tests/unit/convert/test_quantised_serving.cpp. Mutations each failed its check
# (made, watched fail, undone): rtn's symmetric scale m / -256 instead of m / -128 (half the range
# clamped) took int8 to 128.19 (+21%); libcpu's avx512 e4m3 loader without its x256 took fp8 to
# 7.4e7; libcpu's prefill dequantiser dropping the zero point of the low nibbles took int4 to
# 235,589. Not caught, as expected: m / -64 (7-bit codes, nothing clamped) keeps int8 inside 1%, and
# dropping the zero point in the decode kernel only changes nothing here (that kernel never runs).
set(rad ${OUT}/demo_${PRESET}.rad)
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${RAD_CONVERT} ${MODEL} -o ${rad} --recipe ${PRESET} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "rad-convert --recipe ${PRESET} failed: ${err}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/ppl_common.cmake)
rad_ppl(ours ${rad} ${MODEL}/heldout.txt --kernels libcpu)
file(REMOVE ${rad})
file(READ ${MODEL}/ppl_reference.json ref_json)
string(JSON ref GET "${ref_json}" ppl)
expect_within("${PRESET} against the unquantised model" "${ours}" "${ref}" "${MAX_REL}")
