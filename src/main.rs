fn main() -> std::process::ExitCode {
    toolctl::cli::main()
}
