package dashboard_test

import "syscall"

// procAttr puts the browser in a process group of its own, so that its
// helper processes can be stopped with it, and kills it if the test
// process dies first.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup stops the browser and its helper processes.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
