#!/usr/bin/env bats
# A small make torture (tests/torture/torture.py): a dozen runs killed with
# SIGKILL at random moments, then every conversation read, resumed and
# checked for a valid exchange, every run.json parsed, no tool process
# left; and 20 concurrent writers of choices.json and of one conversation.

load lib/helper

@test "runs killed at random leave whole conversations that resume, and no tool behind" {
	run python3 "$XG_SRCDIR/tests/torture/torture.py" --runs 12 --workers 2 --writers 20
	assert_success
	assert_line --partial '"part": "kill", "runs": 12'
	assert_line --partial '"tools_left": 0'
	assert_line --partial '"part": "writers", "choices_writers": 20, "conversation_writers": 20, "modes_kept": 20, "entries_kept": 20'
}
