complete --keep-order --exclusive --command toolctl --arguments "(COMPLETE=fish toolctl -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
