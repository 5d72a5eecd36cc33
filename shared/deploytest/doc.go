// Package deploytest holds what the tests of the deployed artefacts share:
// a fake Lambda Runtime API that real bootstrap binaries run against, the
// processes running them, and the Makefile's function list and build
// targets. Only tests import it; no Lambda binary links it.
//
// Its own tests check template.yaml, samconfig.toml, the Makefile and the
// generated files against the route table (see internal/deploygen), and
// validate the template against the AWS SAM JSON schema kept in testdata/.
package deploytest
