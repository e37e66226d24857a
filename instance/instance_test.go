package instance

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const instanceHelperEnv = "CHOPIN_TEST_INSTANCE_HOLDER"

// TestInstanceHolderProcess is not a test: run as a child process by the
// tests below, it takes the lock of the data directory in instanceHelperEnv,
// records an origin, says "ready" and waits to be killed.
func TestInstanceHolderProcess(t *testing.T) {
	dir := os.Getenv(instanceHelperEnv)
	if dir == "" {
		t.Skip("only run as a child of the instance tests")
	}
	inst, err := Acquire(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if err := inst.Record("http://127.0.0.1:4242"); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	os.Exit(2) // never released: only a kill ends it
}

// startHolder starts a process holding dir's lock and returns it once it holds it.
func startHolder(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInstanceHolderProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), instanceHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
	}()
	select {
	case l := <-line:
		if l != "ready" {
			t.Fatalf("holder process said %q", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("holder process did not take the lock within 10s")
	}
	return cmd
}

func TestInstanceSecondAcquireNamesTheFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()

	// Still starting: no origin yet, but the pid is known.
	_, err = Acquire(dir)
	var running *AlreadyRunningError
	if !errors.As(err, &running) || !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Acquire: err = %v, want an *AlreadyRunningError", err)
	}
	if running.Origin != "" || running.PID != os.Getpid() || running.DataDir != dir {
		t.Errorf("before Record: %+v, want no origin, pid %d, dir %s", running, os.Getpid(), dir)
	}

	if err := first.Record("http://127.0.0.1:8787"); err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	if !errors.As(err, &running) || running.Origin != "http://127.0.0.1:8787" || running.PID != os.Getpid() {
		t.Fatalf("after Record: err = %v, want the origin and pid", err)
	}
	if want := fmt.Sprintf("Chopin is already running at http://127.0.0.1:8787 (process %d)", os.Getpid()); err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	if rec, err := Find(dir); err != nil || rec.Origin != "http://127.0.0.1:8787" {
		t.Errorf("Find = %+v, %v", rec, err)
	}

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if err := first.Record("http://127.0.0.1:1"); err == nil {
		t.Error("Record after Release succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, instanceRecordFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("instance record left after Release: %v", err)
	}
	if _, err := Find(dir); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Find after Release: err = %v, want ErrNotRunning", err)
	}
	again, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	again.Release()
}

func TestInstanceRecoveredAfterHolderIsKilled(t *testing.T) {
	dir := t.TempDir()
	holder := startHolder(t, dir)

	_, err := Acquire(dir)
	var running *AlreadyRunningError
	if !errors.As(err, &running) || running.Origin != "http://127.0.0.1:4242" || running.PID != holder.Process.Pid {
		t.Fatalf("Acquire while another process holds it: err = %v, want origin http://127.0.0.1:4242 and pid %d", err, holder.Process.Pid)
	}
	if rec, err := Find(dir); err != nil || rec.Origin != "http://127.0.0.1:4242" {
		t.Fatalf("Find = %+v, %v", rec, err)
	}

	holder.Process.Kill() // SIGKILL: no chance to clean up
	holder.Wait()

	if _, err := Find(dir); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Find after the kill: err = %v, want ErrNotRunning", err)
	}
	inst, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	defer inst.Release()
	// The dead process's record is gone, not served to a second process.
	_, err = Acquire(dir)
	if !errors.As(err, &running) || running.Origin != "" || running.PID != os.Getpid() {
		t.Errorf("a new holder is reported as %v, want no origin yet and pid %d", err, os.Getpid())
	}
}

func TestInstanceFindCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	if _, err := Find(dir); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Find(missing dir): err = %v, want ErrNotRunning", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Find created %s", dir)
	}
}
