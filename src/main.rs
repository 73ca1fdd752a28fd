/// mimalloc instead of glibc's malloc: building the index and reading a whole lineup allocate
/// millions of small JSON values across threads, where glibc spent ~19% of a rebuild's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    toolctl::cli::main()
}
