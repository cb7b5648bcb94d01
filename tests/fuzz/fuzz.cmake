# Fuzz targets (tests/fuzz/fuzz_*.c), included from the top-level CMakeLists.txt.
#
# Every build gets one replay driver per target (fuzz_replay_<target>: the target plus
# a main() that feeds it files) and a ctest that replays the regression inputs, the
# hand-made seeds and the seed corpora tests/fuzz/make_seeds generates into the build
# dir, so every crash ever found stays fixed in gcc builds too.
#
# With -DTVMJIT_FUZZ=ON (clang only; tests/fuzz/run configures build-fuzz that way) the
# whole library is compiled with -fsanitize=fuzzer-no-link,address,undefined and each
# target is also linked with libFuzzer as fuzz_<target>; `cmake --build build-fuzz
# --target fuzz_targets` builds just those.
set(TVMJIT_FUZZ_TARGETS rx_parse rx_verify npy npz pipeline)
set(TVMJIT_FUZZ_DIR ${CMAKE_SOURCE_DIR}/tests/fuzz)

add_test(NAME fuzz_seeds COMMAND python3 ${TVMJIT_FUZZ_DIR}/make_seeds ${CMAKE_BINARY_DIR}/fuzz-seeds)
set_tests_properties(fuzz_seeds PROPERTIES FIXTURES_SETUP fuzz_seeds
  ENVIRONMENT "TVMJIT_SOURCE_DIR=${CMAKE_SOURCE_DIR};TVMJIT_SHARED_DIR=${CMAKE_SOURCE_DIR}/../shared")

foreach(t ${TVMJIT_FUZZ_TARGETS})
  add_executable(fuzz_replay_${t} ${TVMJIT_FUZZ_DIR}/fuzz_${t}.c ${TVMJIT_FUZZ_DIR}/replay_main.c)
  target_include_directories(fuzz_replay_${t} PRIVATE ${CMAKE_SOURCE_DIR})
  target_link_libraries(fuzz_replay_${t} PRIVATE tvmjit_core)
  add_test(NAME fuzz_replay_${t} COMMAND fuzz_replay_${t} ${TVMJIT_FUZZ_DIR}/regressions/${t}
    ${TVMJIT_FUZZ_DIR}/seeds/${t} ${CMAKE_BINARY_DIR}/fuzz-seeds/${t})
  set_tests_properties(fuzz_replay_${t} PROPERTIES FIXTURES_REQUIRED fuzz_seeds TIMEOUT 900)
endforeach()

if(TVMJIT_FUZZ)
  add_custom_target(fuzz_targets)
  foreach(t ${TVMJIT_FUZZ_TARGETS})
    add_executable(fuzz_${t} ${TVMJIT_FUZZ_DIR}/fuzz_${t}.c)
    target_include_directories(fuzz_${t} PRIVATE ${CMAKE_SOURCE_DIR})
    target_link_libraries(fuzz_${t} PRIVATE tvmjit_core)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    add_dependencies(fuzz_targets fuzz_${t})
  endforeach()
endif()
