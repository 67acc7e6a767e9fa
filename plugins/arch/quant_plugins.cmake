# rad_add_arch_plugins(SOURCE FAMILIES... [QUANTISED]): one source, one plugin per architecture id
# and, with QUANTISED, one more per quant descriptor rad-convert's recipes produce. (id, quant) is
# the selection key, so each is a plugin of its own, built with the code dtypes its projections are
# read in (ARCH_CODES: gemm_q's operands, docs/OPS.md; rad_block_quant.h). w4a16 also reads 8-bit
# codes: the int4 preset keeps an untied head at int8.
include_guard(GLOBAL)

function(rad_add_arch_plugins source)
  cmake_parse_arguments(A "QUANTISED" "" "" ${ARGN})
  set(codes_w8a16 "i8 u8")
  set(codes_w4a16 "i4 u4 i8 u8")
  set(codes_fp8_e4m3 "fp8_e4m3")
  foreach(family ${A_UNPARSED_ARGUMENTS})
    rad_add_plugin(arch_${family} architectures SOURCES ${source})
    target_compile_definitions(arch_${family} PRIVATE FAMILY_ID="${family}")
    set_target_properties(arch_${family} PROPERTIES OUTPUT_NAME arch_${family})
    if(NOT A_QUANTISED)
      continue()
    endif()
    foreach(quant w8a16 w4a16 fp8_e4m3)
      set(t arch_${family}_${quant})
      rad_add_plugin(${t} architectures SOURCES ${source})
      target_compile_definitions(${t} PRIVATE FAMILY_ID="${family}" PLUGIN_NAME="${family}_${quant}" ARCH_QUANT="${quant}"
                                              ARCH_CODES="${codes_${quant}}")
      set_target_properties(${t} PROPERTIES OUTPUT_NAME ${t})
    endforeach()
  endforeach()
endfunction()
