# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_toolctl_global_optspecs
    string join \n catalog= json q/quiet no-progress lock-timeout= h/help V/version
end

function __fish_toolctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_toolctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_toolctl_using_subcommand
    set -l cmd (__fish_toolctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c toolctl -n "__fish_toolctl_needs_command" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_needs_command" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_needs_command" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_needs_command" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_needs_command" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_needs_command" -s V -l version -d 'Print version'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "init" -d 'Create a catalog: toolctl.json, bundles/ and .toolctl/.gitignore'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "bundle" -d 'Manage bundles: named groups of tools with one on/off switch'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "tool" -d 'Manage tools: create, show, list, enable, disable, delete'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "search" -d 'Search tools by name, description, tags and arguments'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "pick" -d 'Pick the few tools that fit a task, best first'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "attach" -d 'Attach the tools an agent needs for a task, under limits'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "agent" -d 'See and correct the tools attached to agents (agents/<agentID>.json)'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "invoke" -d 'Call a tool; print {"ok":true,"value":…} (with --json) or the value'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "export" -d 'Print the tools as a provider\'s request takes them (a JSON array)'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "validate" -d 'Check the catalog (or the files and folders given) and report every problem'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "schema" -d 'Print the JSON Schema of toolctl.json (config), bundle.json (bundle) or tool.json (tool)'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "index" -d 'Look at or rebuild the search index in .toolctl/ (kept up to date automatically)'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "completions" -d 'Print the completion script for a shell'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "config" -d 'Read or change toolctl.json one key at a time (checked against its schema, written atomically)'
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "mcp"
complete -c toolctl -n "__fish_toolctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand init" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand init" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand init" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand init" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand init" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand init" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "put" -d 'Create a bundle, or replace one (with --id, or a file holding its bundleID)'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "get" -d 'Show a bundle: its fields, status, number of tools and where it is stored'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "list" -d 'List bundles in slug order'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "enable" -d 'Enable a bundle and with it its enabled tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "disable" -d 'Disable a bundle and with it all its tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "delete" -d 'Soft-delete a bundle: it is hidden, and reaped once empty and past the grace period'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "restore" -d 'Undo a soft delete'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "reap" -d 'Remove soft-deleted bundles whose grace period is over and that hold no tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "export" -d 'Write a bundle and all its tools to a ZIP archive'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "import" -d 'Add a bundle and its tools from a ZIP archive made by `bundle export`'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and not __fish_seen_subcommand_from put get list enable disable delete restore reap export import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l slug -d 'The bundle\'s slug (letters, digits and \'-\')' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l id -d 'The bundle\'s ID (a UUIDv7); made when creating without it' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l display-name -d 'A human-readable name' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l description -d 'What the bundle\'s tools are for' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l file -d 'Read the whole bundle.json from FILE (- for stdin)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l disabled -d 'Create (or set) the bundle disabled'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from put" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from get" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from get" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from get" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from get" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l bundle -d 'Only this bundle, by slug or ID (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l page-size -d 'Show at most N items (1 to 1000)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l page-token -d 'Continue after the page that printed this token (nextPageToken)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l include-disabled -d 'Also list disabled bundles'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l include-deleted -d 'Also list soft-deleted bundles'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from enable" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from enable" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from enable" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from enable" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from enable" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from disable" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from disable" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from disable" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from disable" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from disable" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from delete" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from delete" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from delete" -l with-tools -d 'Also delete the bundle\'s tools, every version (this cannot be undone)'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from delete" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from delete" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from restore" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from restore" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from restore" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from restore" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from restore" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from restore" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -l older-than -d 'Reap bundles deleted longer ago than this (default: reap.gracePeriod of toolctl.json, 48h)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -l dry-run -d 'Say what would be reaped without removing anything'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from reap" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -s o -l output -d 'Write the archive to FILE (- for standard output)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -l force -d 'Replace FILE if it exists'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -l slug -d 'Give the imported bundle this slug (letters, digits and \'-\')' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -l as-new -d 'Import a copy: a new bundleID and new toolIDs, the bundle\'s createdAt and modifiedAt now'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -l update -d 'Add the versions the catalog\'s copy of the bundle lacks (see above)'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "put" -d 'Create a bundle, or replace one (with --id, or a file holding its bundleID)'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "get" -d 'Show a bundle: its fields, status, number of tools and where it is stored'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "list" -d 'List bundles in slug order'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Enable a bundle and with it its enabled tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Disable a bundle and with it all its tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Soft-delete a bundle: it is hidden, and reaped once empty and past the grace period'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "restore" -d 'Undo a soft delete'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "reap" -d 'Remove soft-deleted bundles whose grace period is over and that hold no tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "export" -d 'Write a bundle and all its tools to a ZIP archive'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "import" -d 'Add a bundle and its tools from a ZIP archive made by `bundle export`'
complete -c toolctl -n "__fish_toolctl_using_subcommand bundle; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "put" -d 'Create a tool from a tool.json file (or - for stdin)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "get" -d 'Show a tool: its fields, status, schemas and where it is stored'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "list" -d 'List tools in bundle, slug and version order'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "enable" -d 'Enable a tool (only its isEnabled flag changes)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "disable" -d 'Disable a tool (only its isEnabled flag changes)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "delete" -d 'Delete a tool version for good (built-in tools cannot be deleted)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "new" -d 'Write a new tool.json to start from, valid as it is, and print its path'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and not __fish_seen_subcommand_from put get list enable disable delete new help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from put" -l bundle -d 'The bundle to put the tool into, by slug or ID (default: the file\'s bundleID)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from put" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from put" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from put" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from put" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from put" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from put" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from get" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from get" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from get" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from get" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l bundle -d 'Only tools of this bundle, by slug or ID (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l tag -d 'Only tools with this tag (can be repeated: all must match)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l page-size -d 'Show at most N items (1 to 1000)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l page-token -d 'Continue after the page that printed this token (nextPageToken)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l include-disabled -d 'Also list disabled tools and tools of disabled bundles'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l include-deleted -d 'Also list tools of soft-deleted bundles'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from enable" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from enable" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from enable" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from enable" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from enable" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from enable" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from disable" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from disable" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from disable" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from disable" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from disable" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from disable" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from delete" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from delete" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from delete" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from delete" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l type -d 'How the tool runs' -r -f -a "http\t'An HTTP request'
native\t'A function compiled into toolctl'"
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l version -d 'The version to create' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l url -d 'HTTP tools: the URL template (default: one on the first host of allowedHosts)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l func -d 'Native tools: the function to run (default: now)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from new" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "put" -d 'Create a tool from a tool.json file (or - for stdin)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "get" -d 'Show a tool: its fields, status, schemas and where it is stored'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "list" -d 'List tools in bundle, slug and version order'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "enable" -d 'Enable a tool (only its isEnabled flag changes)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "disable" -d 'Disable a tool (only its isEnabled flag changes)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete a tool version for good (built-in tools cannot be deleted)'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "new" -d 'Write a new tool.json to start from, valid as it is, and print its path'
complete -c toolctl -n "__fish_toolctl_using_subcommand tool; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l bundle -d 'Only tools of this bundle, by slug or ID (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l tag -d 'Only tools with this tag (can be repeated: all must match)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l page-size -d 'Show at most N items (1 to 1000)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l page-token -d 'Continue after the page that printed this token (nextPageToken)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l include-disabled -d 'Also disabled and unavailable tools, and tools of disabled bundles'
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l include-deleted -d 'Also tools of soft-deleted bundles'
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand search" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l max -d 'Pick at most N tools (1 to 128)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l min-score -d 'Leave out tools scoring under X (0 to 1)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l scorer -d 'How to score: bm25 (the search relevance, best offline), keyword, hybrid, embed or llm' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l timeout-ms -d 'Give up scoring after MS milliseconds and return the first tools in registration order' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l emit -d 'Print the picked tools in this provider\'s format instead (as `export` does)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l embed-url -d 'The embeddings endpoint (embed, hybrid), e.g. http://127.0.0.1:11434/v1' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l embed-model -d 'The embeddings model' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l llm-url -d 'The chat completions endpoint (llm), e.g. https://api.openai.com/v1' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l llm-model -d 'The chat model' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l allow-unsafe -d 'Also pick tools that are not safe'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l debug -d 'Show why each tool was picked: scorer, matched terms, sub-scores'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l strict -d 'With --emit openai or openai-responses: strict mode'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l lenient -d 'With --emit: leave out, with a warning, tools the provider cannot take'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand pick" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l query -d 'What the agent is about to do, in any words' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l limit -d 'Consider the best N matches (1 to FIND_TOOLS_MAX_LIMIT, 25 unless set)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l min-score -d 'Attach only matches scoring X or more (0 to 100)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l keep -d 'Never detach TOOL: [bundle/]slug[@version], toolID or exported name (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l scorer -d 'How to score relevance: keyword, bm25, hybrid, embed or llm [default: hybrid when an embeddings endpoint is set, else bm25]' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l embed-url -d 'The embeddings endpoint (embed, hybrid), e.g. http://127.0.0.1:11434/v1' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l embed-model -d 'The embeddings model' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l llm-url -d 'The chat completions endpoint (llm), e.g. https://api.openai.com/v1' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l llm-model -d 'The chat model' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l no-auto-prune -d 'Skip the post-attach pruning (the limits still hold)'
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand attach" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -f -a "list" -d 'List the agents that have tools attached'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -f -a "show" -d 'Show an agent\'s tools, and whether each can still be called'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -f -a "detach" -d 'Detach tools from an agent by hand (protection is for attach runs, not for you)'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and not __fish_seen_subcommand_from list show detach help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from list" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from list" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from list" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from list" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from list" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from show" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from show" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from show" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from show" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from detach" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from detach" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from detach" -l all -d 'Detach every tool'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from detach" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from detach" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from detach" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from detach" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the agents that have tools attached'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from help" -f -a "show" -d 'Show an agent\'s tools, and whether each can still be called'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from help" -f -a "detach" -d 'Detach tools from an agent by hand (protection is for attach runs, not for you)'
complete -c toolctl -n "__fish_toolctl_using_subcommand agent; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l batch -d 'Run a batch of calls read from FILE (`-`: standard input)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l args -d 'The arguments: a JSON object, or a JSON string holding one (as OpenAI sends them)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l args-file -d 'Read the arguments from a file' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l workspace -d 'The folder file tools work in (default: the current folder); they cannot leave it' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l approve -d 'Approve in advance a run that needs a person\'s approval (noSchemaMode human-approval)'
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l stream -d 'Print each event of a streamed (SSE) response as it comes (one JSON line each with --json)'
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand invoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l provider -d 'The format: openai, openai-responses, anthropic, ollama, gemini or mcp' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l bundle -d 'Only tools of this bundle, by slug or ID (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l tag -d 'Only tools with this tag (can be repeated: all must match)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l tool -l name -d 'Only this tool: bundle/slug[@version], slug, toolID or exported name (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l include-disabled -d 'Also disabled and unavailable tools, and tools of disabled bundles'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l strict -d 'OpenAI strict mode for every tool (openai, openai-responses)'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l lenient -d 'Leave out, with a warning, tools the provider cannot take'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l force -d 'Export more tools than the provider takes in one request'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand export" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -l format -d 'How to print the findings' -r -f -a "human\t'One line per finding: file:line:column: severity[rule]: message'
json\t'One JSON document (as --json)'
github\t'GitHub Actions annotations (::error file=…,line=…::message)'"
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -l provider -d 'Also warn of what this provider would refuse, and of more enabled tools than it takes (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -l strict -d 'Treat warnings as errors'
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand validate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand schema" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand schema" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand schema" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand schema" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand schema" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -f -a "status" -d 'Bring the index up to date and show what it holds'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -f -a "rebuild" -d 'Delete the index and build it again from the files'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -f -a "watch" -d 'Watch the catalog\'s files so commands need not check each one (Linux)'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and not __fish_seen_subcommand_from status rebuild watch help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from status" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from status" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from status" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from status" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from rebuild" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from rebuild" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from rebuild" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from rebuild" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from rebuild" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from rebuild" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -l detach -d 'Run in the background and return once it answers'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -l stop -d 'Stop the catalog\'s watcher'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from help" -f -a "status" -d 'Bring the index up to date and show what it holds'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from help" -f -a "rebuild" -d 'Delete the index and build it again from the files'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from help" -f -a "watch" -d 'Watch the catalog\'s files so commands need not check each one (Linux)'
complete -c toolctl -n "__fish_toolctl_using_subcommand index; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand completions" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand completions" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand completions" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand completions" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand completions" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -f -a "get" -d 'Print a key\'s value (strings as they are, anything else as JSON), or the whole file'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -f -a "set" -d 'Set a key to VALUE'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -f -a "add" -d 'Add VALUE to a list key (nothing changes when it is there already)'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -f -a "remove" -d 'Remove VALUE from a list key, or without VALUE the key itself'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and not __fish_seen_subcommand_from get set add remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from get" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from get" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from get" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from get" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from get" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from set" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from set" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from set" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from set" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from add" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from add" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from add" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from add" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from add" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from remove" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from remove" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from remove" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from remove" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from remove" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "get" -d 'Print a key\'s value (strings as they are, anything else as JSON), or the whole file'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "set" -d 'Set a key to VALUE'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add VALUE to a list key (nothing changes when it is there already)'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove VALUE from a list key, or without VALUE the key itself'
complete -c toolctl -n "__fish_toolctl_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -s h -l help -d 'Print help'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -f -a "serve" -d 'Serve the catalog\'s tools to an MCP client, over stdio (or Streamable HTTP)'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -f -a "import" -d 'Bring an MCP server\'s tools into the catalog, one tool.json each (type "mcp")'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and not __fish_seen_subcommand_from serve import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l mode -d 'What the client is shown: all, search or auto' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l bundle -d 'Only tools of this bundle, by slug or ID (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l tag -d 'Only tools with this tag (can be repeated: all must match)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l tool -d 'Only this tool: bundle/slug[@version], slug, toolID or exported name (can be repeated)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l page-size -d 'Tools per tools/list page' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l http -d 'Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:8765) instead of stdio' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l workspace -d 'The folder file tools work in (default: the current folder); they cannot leave it' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l public -d 'Listen on an address other than loopback with --http (anyone who reaches it can run tools)'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from import" -l bundle -d 'The bundle the tools go in, by slug (default: the server\'s name)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from import" -l catalog -d 'Use the catalog in DIR' -r -F
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from import" -l lock-timeout -d 'Wait at most this long for the catalog\'s write lock (e.g. 500ms, 10s)' -r
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from import" -l json -d 'Print one JSON document on stdout, errors included'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from import" -s q -l quiet -d 'Print no status lines or warnings on stderr'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from import" -l no-progress -d 'Never show progress bars'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "serve" -d 'Serve the catalog\'s tools to an MCP client, over stdio (or Streamable HTTP)'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "import" -d 'Bring an MCP server\'s tools into the catalog, one tool.json each (type "mcp")'
complete -c toolctl -n "__fish_toolctl_using_subcommand mcp; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "init" -d 'Create a catalog: toolctl.json, bundles/ and .toolctl/.gitignore'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "bundle" -d 'Manage bundles: named groups of tools with one on/off switch'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "tool" -d 'Manage tools: create, show, list, enable, disable, delete'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "search" -d 'Search tools by name, description, tags and arguments'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "pick" -d 'Pick the few tools that fit a task, best first'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "attach" -d 'Attach the tools an agent needs for a task, under limits'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "agent" -d 'See and correct the tools attached to agents (agents/<agentID>.json)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "invoke" -d 'Call a tool; print {"ok":true,"value":…} (with --json) or the value'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "export" -d 'Print the tools as a provider\'s request takes them (a JSON array)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "validate" -d 'Check the catalog (or the files and folders given) and report every problem'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "schema" -d 'Print the JSON Schema of toolctl.json (config), bundle.json (bundle) or tool.json (tool)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "index" -d 'Look at or rebuild the search index in .toolctl/ (kept up to date automatically)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "completions" -d 'Print the completion script for a shell'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "config" -d 'Read or change toolctl.json one key at a time (checked against its schema, written atomically)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "mcp"
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and not __fish_seen_subcommand_from init bundle tool search pick attach agent invoke export validate schema index completions config mcp help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "put" -d 'Create a bundle, or replace one (with --id, or a file holding its bundleID)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "get" -d 'Show a bundle: its fields, status, number of tools and where it is stored'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "list" -d 'List bundles in slug order'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "enable" -d 'Enable a bundle and with it its enabled tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "disable" -d 'Disable a bundle and with it all its tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "delete" -d 'Soft-delete a bundle: it is hidden, and reaped once empty and past the grace period'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "restore" -d 'Undo a soft delete'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "reap" -d 'Remove soft-deleted bundles whose grace period is over and that hold no tools'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "export" -d 'Write a bundle and all its tools to a ZIP archive'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from bundle" -f -a "import" -d 'Add a bundle and its tools from a ZIP archive made by `bundle export`'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from tool" -f -a "put" -d 'Create a tool from a tool.json file (or - for stdin)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from tool" -f -a "get" -d 'Show a tool: its fields, status, schemas and where it is stored'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from tool" -f -a "list" -d 'List tools in bundle, slug and version order'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from tool" -f -a "enable" -d 'Enable a tool (only its isEnabled flag changes)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from tool" -f -a "disable" -d 'Disable a tool (only its isEnabled flag changes)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from tool" -f -a "delete" -d 'Delete a tool version for good (built-in tools cannot be deleted)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from tool" -f -a "new" -d 'Write a new tool.json to start from, valid as it is, and print its path'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from agent" -f -a "list" -d 'List the agents that have tools attached'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from agent" -f -a "show" -d 'Show an agent\'s tools, and whether each can still be called'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from agent" -f -a "detach" -d 'Detach tools from an agent by hand (protection is for attach runs, not for you)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from index" -f -a "status" -d 'Bring the index up to date and show what it holds'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from index" -f -a "rebuild" -d 'Delete the index and build it again from the files'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from index" -f -a "watch" -d 'Watch the catalog\'s files so commands need not check each one (Linux)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "get" -d 'Print a key\'s value (strings as they are, anything else as JSON), or the whole file'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "set" -d 'Set a key to VALUE'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "add" -d 'Add VALUE to a list key (nothing changes when it is there already)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "remove" -d 'Remove VALUE from a list key, or without VALUE the key itself'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "serve" -d 'Serve the catalog\'s tools to an MCP client, over stdio (or Streamable HTTP)'
complete -c toolctl -n "__fish_toolctl_using_subcommand help; and __fish_seen_subcommand_from mcp" -f -a "import" -d 'Bring an MCP server\'s tools into the catalog, one tool.json each (type "mcp")'
