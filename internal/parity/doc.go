// Package parity is the parity harness (decisions D19): refapp/app.py is a FastAPI app
// declaring the partner API's routes, parameters and models as docs/decisions.md says, with
// trivial handlers; the test here starts it under uvicorn on loopback beside the sandbox,
// sends both the same generated requests (Cases) and records the framework's answers as the
// main module's table, simulator/httpapi/testdata/fastapi_parity.json, which
// simulator/httpapi's TestFastAPIParity replays against the sandbox in CI without Python.
//
// It is a module of its own, like internal/interop, so that nothing of the framework's comes
// near the main module. The framework is not vendored: PARITY_PYTHONPATH names a directory
// holding the fastapi, starlette, uvicorn, h11, anyio and annotated_doc packages (the
// machine's python3 brings pydantic); without it the test is skipped. README.md says how to
// get them and how to record.
package parity
