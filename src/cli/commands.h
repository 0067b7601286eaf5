/* SPDX-License-Identifier: GPL-2.0-only */
/* The subcommands main() hands a command line to. */
#ifndef MS_CLI_COMMANDS_H
#define MS_CLI_COMMANDS_H

/*
 * Entry points. main() calls one when argv[1] is its word, with
 * (argc - 1, argv + 1): @argv[0] is the subcommand word, the options
 * follow. Each returns the exit status: MS_EXIT_OK, MS_EXIT_FAIL or
 * MS_EXIT_USAGE.
 */
int ms_cli_verify(int argc, char **argv);
int ms_cli_info(int argc, char **argv);
int ms_cli_strip(int argc, char **argv);

/* ms_cli_agent() - `modsign agent ...` (agent.c); argv[0] is "agent". */
int ms_cli_agent(int argc, char **argv);

#endif
