# Sourced by the provisioning scripts: the CPU code paths every llama.cpp build of the workload compiles in.
# On x86_64 a fixed AVX2 level instead of -march=native, so the same kernels run on every machine: on a CPU
# with AMX (Sapphire Rapids and later) a native build routes weight matmuls (F16 too) to the AMX buffer type,
# so BLAS gets none of them, and releases of late 2024 split every graph across an AMX backend; the tests'
# oracles would then meet another llama.cpp on each host. (The prebuilt npm libraries keep their own variants,
# AMX included: the fidelity tests count the AMX matmul kernel there.)
llama_cpu_flags() {
  case "$(uname -m)" in
    x86_64) echo "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" ;;
    *) echo "" ;;
  esac
}

# A build's stamp holds the flags it was built with: built again when they change.
llama_stamp_current() { [ -f "$1" ] && [ "$(cat "$1")" = "flags: $(llama_cpu_flags)" ]; }
llama_stamp_write() { echo "flags: $(llama_cpu_flags)" >"$1"; }
