#!/usr/bin/env bash
# The long form of "Crash at every I/O call" and "Faults at and after
# COMMIT's sync" (docs/reliability.md): the C++ tests of
# tests/cpp/crash_points_test.cc with ONESTORE_CRASH_POINTS=all, which crash
# the workload at every one of its I/O calls with 10 damage seeds each, and
# fail every call of every kind and every call of every COMMIT, in each
# journal mode and durability. Each test prints its figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
ONESTORE_CRASH_POINTS=all exec build/native/onestore_tests \
  --gtest_filter='Modes/CrashAtEveryIoCall.*:Modes/CommitFaults.*:Modes/EveryCallKind.*:Modes/RecoveryFaults.*:VfsMethodFaults.*'
