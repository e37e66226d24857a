package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"time"
)

// The command line, the choice of rows, and the table. Each row is a
// function that measures Chopin and its baseline in the same run and
// returns one line or more of the table; run builds what the chosen rows
// need once and prints the table as the rows finish.

// options are the harness's flags.
type options struct {
	only       string // comma-separated row names; empty: every row
	bin        string // a chopin binary to use instead of building one
	docs       int    // documents of the small catalog
	largeDocs  int    // documents of the large catalog
	searches   int    // searches measured per catalog
	edits      int    // plan pushes per ack row
	starts     int    // starts of each server
	startDocs  int    // documents of the large database the start rows start on
	startMB    int    // megabytes of plans, Chat and pictures in it
	rooms      int    // open rooms for the memory row
	fanEdits   int    // edits of the fan-out rows, on each side
	fanReaders int    // sockets reading them
	parts      int    // paced agent parts
	burst      int    // parts of the throughput burst
	quick      bool   // small sizes, for the test
	verbose    bool
	hold       time.Duration // how long the rooms row keeps its rooms open after measuring, for a profiler
	writeDoc   string        // a Markdown file whose marked table the run replaces
	args       []string      // the command line's flags, as the doc names the run
}

// rowNames are the rows in the order of the table, as -only names them.
var rowNames = []string{"search", "search100k", "ack", "cpu", "bigplan", "start", "rooms", "fanout", "parts", "throughput", "image", "binary"}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "relay":
			if err := runRelay(os.Args[2:], os.Stdout); err != nil {
				fmt.Fprintln(os.Stderr, "chopin-bench relay:", err)
				os.Exit(1)
			}
			return
		}
	}
	var o options
	fs := flag.NewFlagSet("chopin-bench", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./cmd/chopin-bench [flags]\n\nMeasures chopin beside its baselines and prints a Markdown table.\nRows: %s.\n\n", strings.Join(rowNames, ", "))
		fs.PrintDefaults()
	}
	o.register(fs)
	fs.Parse(os.Args[1:])
	o.args = os.Args[1:]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "chopin-bench:", err)
		os.Exit(1)
	}
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.only, "only", "", "comma-separated rows to measure (default every row): "+strings.Join(rowNames, ","))
	fs.StringVar(&o.bin, "bin", "", "a chopin binary to measure (default: build the module's with CGO_ENABLED=0)")
	fs.IntVar(&o.docs, "docs", 10_000, "documents in the small catalog (10 of them match the search)")
	fs.IntVar(&o.largeDocs, "large-docs", 100_000, "documents in the large catalog (10 of them match the search)")
	fs.IntVar(&o.searches, "searches", 100, "searches measured on each catalog")
	fs.IntVar(&o.edits, "edits", 1000, "plan pushes measured on each plan (and relay messages)")
	fs.IntVar(&o.starts, "starts", 20, "starts of chopin and of the hello-world server, on each database")
	fs.IntVar(&o.startDocs, "start-docs", 100_000, "documents in the large database the start rows start on")
	fs.IntVar(&o.startMB, "start-mb", 1024, "megabytes of plans, Chat and pictures in the large database the start rows start on")
	fs.IntVar(&o.rooms, "rooms", 1000, "open rooms (and relay sockets) for the memory row")
	fs.IntVar(&o.fanEdits, "fan-edits", 2000, "edits sent to the readers by Chopin and by the relay, each, for the fan-out rows")
	fs.IntVar(&o.fanReaders, "fan-readers", 20, "sockets reading the fan-out rows' edits, on each side (the goals are for 20)")
	fs.IntVar(&o.parts, "parts", 5000, "agent parts sent at 1,000 a second for the latency row")
	fs.IntVar(&o.burst, "burst", 20_000, "agent parts sent at once for the throughput row")
	fs.BoolVar(&o.quick, "quick", false, "small sizes and few repeats: checks the harness works, measures nothing worth keeping")
	fs.BoolVar(&o.verbose, "v", false, "say what it is doing on stderr")
	fs.DurationVar(&o.hold, "hold", 0, "keep the rooms row's rooms (and the fan-out row's sockets) open this long after measuring, saying chopin's pid on stderr: time to take a profile")
	fs.StringVar(&o.writeDoc, "write-doc", "", "also write the table into this Markdown file (docs/performance.md), between its lines\n"+docBegin+"\nand "+docEnd+"; every row, full size: not with -only, -quick or -fan-readers")
}

// quickSizes are -quick's sizes.
func (o *options) applyQuick() {
	o.docs, o.largeDocs, o.searches, o.edits, o.starts, o.rooms, o.parts, o.burst = 200, 500, 5, 20, 2, 20, 100, 500
	o.fanEdits = 50
	o.startDocs, o.startMB = 500, 8
}

// row is one line of the table.
type row struct {
	name     string // the -only name that measures it
	measure  string
	chopin   string
	baseline string
	ratio    string
	goal     string
	met      string // yes, no, or "" when the row has no goal
}

// bench is one run: the options, where it writes, and what it built.
type bench struct {
	o       options
	log     io.Writer
	tmp     string // removed at the end
	chopin  string // the binary measured
	source  string // the module directory it was built from; "" with -bin
	module  string // the chopin module's directory
	hello   string // the hello-world server
	floor   string // the hello-world server with chopin's packages and database (startfloor)
	harness string // this program, for the relay
}

func run(ctx context.Context, o options, out, log io.Writer) error {
	if o.quick {
		o.applyQuick()
	}
	chosen := rowNames
	if o.only != "" {
		chosen = strings.Split(o.only, ",")
		for _, name := range chosen {
			if !slices.Contains(rowNames, name) {
				return fmt.Errorf("no row %q (the rows: %s)", name, strings.Join(rowNames, ", "))
			}
		}
	}
	if o.fanReaders == 0 {
		o.fanReaders = 20
	}
	if o.writeDoc != "" {
		// Checked before minutes of measuring, not after.
		if o.only != "" || o.quick || o.fanReaders != 20 {
			return errors.New("-write-doc writes the whole table at its full sizes: leave out -only, -quick and -fan-readers")
		}
		doc, err := os.ReadFile(o.writeDoc)
		if err != nil {
			return err
		}
		if _, err := replaceDocTable(doc, ""); err != nil {
			return fmt.Errorf("%s: %w", o.writeDoc, err)
		}
	}
	if runtime.GOOS != "linux" {
		return errors.New("the harness reads /proc for CPU time and memory: run it on Linux")
	}
	tmp, err := os.MkdirTemp("", "chopin-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b := &bench{o: o, log: io.Discard, tmp: tmp}
	if o.verbose {
		b.log = log
	}
	if b.harness, err = os.Executable(); err != nil {
		return err
	}
	started := time.Now()
	loadBefore := loadAvg()
	if err := b.build(ctx); err != nil {
		return err
	}
	var rows []row
	add := func(r ...row) { rows = append(rows, r...) }
	has := func(names ...string) bool {
		for _, n := range names {
			if slices.Contains(chosen, n) {
				return true
			}
		}
		return false
	}
	steps := []struct {
		names []string
		run   func(context.Context) ([]row, error)
	}{
		{[]string{"search", "search100k"}, func(ctx context.Context) ([]row, error) {
			return b.searchRows(ctx, has("search"), has("search100k"))
		}},
		{[]string{"ack", "cpu", "bigplan"}, func(ctx context.Context) ([]row, error) {
			return b.ackRows(ctx, has("ack"), has("cpu"), has("bigplan"))
		}},
		{[]string{"start"}, b.startRows},
		{[]string{"rooms"}, b.roomRows},
		{[]string{"fanout"}, b.fanoutRows},
		{[]string{"parts", "throughput"}, func(ctx context.Context) ([]row, error) {
			return b.partRows(ctx, has("parts"), has("throughput"))
		}},
		{[]string{"image"}, b.imageRows},
		{[]string{"binary"}, b.binaryRows},
	}
	for _, s := range steps {
		if !has(s.names...) {
			continue
		}
		fmt.Fprintf(b.log, "measuring %s\n", strings.Join(s.names, ", "))
		r, err := s.run(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Join(s.names, ", "), err)
		}
		add(r...)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	table := runTable{
		date:       time.Now().UTC(),
		command:    commandLine(o.args),
		cpus:       runtime.NumCPU(),
		cpuModel:   cpuModel(),
		goVersion:  runtime.Version(),
		binary:     b.binaryText(),
		loadBefore: loadBefore,
		loadAfter:  loadAvg(),
		took:       time.Since(started).Round(time.Second),
		rows:       rows,
	}.markdown()
	fmt.Fprint(out, table)
	if o.writeDoc != "" {
		return writeDocTable(o.writeDoc, table)
	}
	return nil
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// met says whether a measure is under its goal.
func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func msText(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func ratioText(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
