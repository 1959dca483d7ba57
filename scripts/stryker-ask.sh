#!/usr/bin/env bash
# Stryker's per-mutant command (cwd: the sandbox): asks the mutation harness's daemon (scripts/stryker-daemon.mjs)
# over its TCP port with bash's /dev/tcp, so a mutant costs no node start-up (~0.1 s of CPU each, 8 000 times in the
# policy area). The dry run, the mutants before the daemon is up, --verify-every runs and any failure here go to
# scripts/stryker-dispatch.mjs, which starts the daemon, checks against AVA and falls back to it.
# Exit status as the command runner reads it: 1 killed, 0 survived.
# Usage: bash scripts/stryker-ask.sh AREA
area=$1
mutant=${__STRYKER_ACTIVE_MUTANT__:-}
dispatch() { exec node scripts/stryker-dispatch.mjs "$area"; }
[[ -n $mutant && -z ${STRYKER_VERIFY_EVERY:-} && -r .stryker-coverage/daemon.port ]] || dispatch
port=$(<.stryker-coverage/daemon.port)
{ exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || dispatch
printf '{"mutant":"%s"}\n' "$mutant" >&3
IFS= read -r answer <&3 || dispatch
exec 3<&-
# The daemon's answers start with the verdict ({"killed":…); anything else (an error) goes the slow way.
case $answer in
  '{"killed":true'*) echo "mutant $mutant: $answer"; exit 1 ;;
  '{"killed":false'*) echo "mutant $mutant: $answer"; exit 0 ;;
  *) dispatch ;;
esac
