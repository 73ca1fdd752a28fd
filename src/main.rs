/// mimalloc instead of glibc's malloc: building the index and reading a whole lineup allocate
/// millions of small JSON values across threads, where glibc spent ~19% of a rebuild's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // `exec` and stdio MCP servers start toolctl itself as the launcher of a program in its
    // own cgroup.
    if let Some(code) = toolctl_lib::invoke::native::cgroup::launcher() {
        return code;
    }
    toolctl::cli::main()
}
