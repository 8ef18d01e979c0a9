#!/bin/sh
# make lint: actionlint over the GitHub recipes. The example workflow (examples/pipelines/github/contract.yml)
# is linted as it is; actionlint checks the inputs a workflow gives a local action only for
# `uses: ./` inside a repository's .github/workflows, so a copy of the workflow that uses this
# checkout's action.yml is linted in a temporary repository too. $1 is the actionlint command.
set -eu
actionlint="$1"
root=$(pwd)
$actionlint "$root/examples/pipelines/github/contract.yml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/.github/workflows"
cp "$root/action.yml" "$tmp/"
sed 's#partnersim/partnersim@main#./#' "$root/examples/pipelines/github/contract.yml" > "$tmp/.github/workflows/contract.yml"
git -C "$tmp" init -q
(cd "$tmp" && $actionlint)
