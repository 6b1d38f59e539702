#!/bin/sh
# Written by `weft dockerfile` into the build context as .weft-build/install.sh; the Dockerfile runs it from the
# project's directory. It installs the project's dependencies and Weft's worker of one language:
#
#   install.sh python [--prefix DIR] [--config FILE] [--offline-from VENV]
#       a virtualenv at DIR/venv (default /opt/weft) with, in one pip resolution, .weft-build/requirements.txt:
#       the project's dependencies as langgraph.json lists them (PyPI names, local packages, the requirements.txt
#       of local directories, with the project's own pins) and the Python worker's (their version ranges); then the
#       worker's modules (.weft-build/worker-py) at DIR/worker-py, on the virtualenv's path. Run the worker with
#       DIR/venv/bin/python -m weft_worker.
#   install.sh js [--config FILE] [--offline-from NPM_CACHE]
#       the project's packages as its lockfile says (npm ci, yarn install --frozen-lockfile, pnpm install
#       --frozen-lockfile; npm install without a lockfile), then the JS worker (.weft-build/worker-js) into
#       node_modules/.weft-worker, where its imports resolve to the project's packages. Run it with
#       node node_modules/.weft-worker/bin/weft-worker.mjs.
#
# --config names the project's config (default langgraph.json): the JS install reads its graphs (TypeScript ones
# need tsx).
#
# --offline-from installs without the network, from what a machine already has: for python, the site-packages of
# an existing virtualenv are put on the new one's path and pip checks, without an index, that they satisfy every
# requirement (the virtualenv's interpreter makes the new one); for js, npm ci --offline reads the packages from
# that npm cache. Tests use it; an image build does not.
set -eu

usage() {
	echo "usage: $0 python [--prefix DIR] [--config FILE] [--offline-from VENV] | js [--config FILE] [--offline-from NPM_CACHE]" >&2
	exit 2
}
fail() {
	echo "weft install: $*" >&2
	exit 1
}

[ $# -ge 1 ] || usage
lang=$1
shift
prefix=/opt/weft
config=langgraph.json
offline=
while [ $# -gt 0 ]; do
	case $1 in
	--prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
	--config) [ $# -ge 2 ] || usage; config=$2; shift 2 ;;
	--offline-from) [ $# -ge 2 ] || usage; offline=$2; shift 2 ;;
	*) usage ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$config" ] || fail "run me from the project's directory (no $config here)"

case $lang in
python)
	python=python3
	venv_flags=
	pip_flags=
	if [ -n "$offline" ]; then
		[ -x "$offline/bin/python" ] || fail "--offline-from $offline: not a virtualenv (no bin/python)"
		python=$offline/bin/python
		venv_flags=--without-pip # the cached virtualenv's pip runs it
		pip_flags="--no-index --no-build-isolation"
	fi
	command -v "$python" >/dev/null 2>&1 || fail "no $python: the Python worker needs Python 3.11 or later"
	"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
		fail "$("$python" -V 2>&1) is too old: the Python worker needs 3.11 or later (langgraph.json python_version)"
	mkdir -p "$prefix"
	prefix=$(cd "$prefix" && pwd)
	"$python" -m venv $venv_flags "$prefix/venv"
	py=$prefix/venv/bin/python
	site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	if [ -n "$offline" ]; then
		"$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' >"$site/_weft_offline.pth"
	fi
	echo "weft install: pip install -r .weft-build/requirements.txt into $prefix/venv" >&2
	# shellcheck disable=SC2086 # the flags are words
	"$py" -m pip install --disable-pip-version-check --no-cache-dir $pip_flags -r "$here/requirements.txt"
	rm -rf "$prefix/worker-py"
	mkdir -p "$prefix/worker-py"
	cp -R "$here/worker-py/weft_worker" "$prefix/worker-py/"
	echo "$prefix/worker-py" >"$site/weft_worker.pth"
	"$py" -c 'import weft_worker.worker, langgraph.graph' ||
		fail "the Python worker does not import in $prefix/venv (above: what is missing)"
	echo "weft install: the Python worker: $py -m weft_worker" >&2
	;;
js)
	command -v node >/dev/null 2>&1 || fail "no node: the JS worker needs Node.js 20 or later"
	node -e 'process.exit(Number(process.versions.node.split(".")[0]) < 20 ? 1 : 0)' ||
		fail "node $(node -v) is too old: the JS worker needs 20 or later (langgraph.json node_version)"
	[ -f package.json ] || fail "no package.json: the JS graphs' packages (@langchain/langgraph …) are installed from it"
	if [ -n "$offline" ] && [ ! -f package-lock.json ] && [ ! -f npm-shrinkwrap.json ]; then
		fail "--offline-from needs an npm lockfile (package-lock.json)"
	fi
	if [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then
		if [ -n "$offline" ]; then
			npm ci --offline --cache "$offline" --no-audit --no-fund
		else
			npm ci --no-audit --no-fund
		fi
	elif [ -f yarn.lock ]; then
		yarn install --frozen-lockfile
	elif [ -f pnpm-lock.yaml ]; then
		corepack pnpm install --frozen-lockfile
	elif [ -f bun.lockb ] || [ -f bun.lock ]; then
		fail "bun's lockfile: the image is Node's, without bun; commit a package-lock.json (npm install) instead"
	else
		npm install --no-audit --no-fund
	fi
	[ -d node_modules ] || fail "no node_modules after the install (Yarn Plug'n'Play is not supported: set nodeLinker: node-modules)"
	rm -rf node_modules/.weft-worker
	cp -R "$here/worker-js" node_modules/.weft-worker
	# The worker imports @langchain/langgraph, @langchain/langgraph-checkpoint and @langchain/core from the
	# project's packages: --help loads every module it imports without starting.
	node node_modules/.weft-worker/bin/weft-worker.mjs --help >/dev/null ||
		fail "the JS worker cannot load its packages from the project's node_modules (above): add @langchain/langgraph and @langchain/core to package.json"
	# TypeScript graphs are loaded with tsx, from the project's packages too (as weft dev checks).
	WEFT_CONFIG=$config node -e '
const graphs = Object.values(JSON.parse(require("fs").readFileSync(process.env.WEFT_CONFIG, "utf8")).graphs ?? {});
const ts = graphs.map((g) => (typeof g === "string" ? g : g?.path ?? "")).some((p) => /\.(ts|mts|cts|tsx):[^:]*$/.test(p));
process.exit(ts && !require("fs").existsSync("node_modules/tsx/package.json") ? 1 : 0);' ||
		fail "the TypeScript graphs are loaded with tsx, which the project lacks: npm install --save-dev tsx"
	echo "weft install: the JS worker: node node_modules/.weft-worker/bin/weft-worker.mjs" >&2
	;;
*) usage ;;
esac
