/* placeholder */ int pn_cli_placeholder;
