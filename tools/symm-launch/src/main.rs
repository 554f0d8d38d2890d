//! `symm-launch -n N prog args...`; see `symm_runtime::launcher`.

fn main() {
    std::process::exit(symm_runtime::launcher::main());
}
