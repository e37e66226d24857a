package app

// A document's plan as a Markdown file (issue "Markdown out and in"):
//
//	GET  /api/channels/:channelId/plan.md[?decisions=inline]   the plan source, as a download
//	POST /api/repositories/:owner/:repository/imports[?title=] a new document from a Markdown body
//	POST /api/channels/:channelId/plan/save                    write it into the repository's checkout
//
// The file has the line endings of the file the document was imported from
// (the plan itself holds "\n"). Saving into a checkout never replaces a file
// that changed on disk since Chopin last saved it there, unless asked to.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/checkout"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// planFileBytes is the document's plan as its Markdown file holds it: with
// its decision cards' marks, or with inline set, the cards written out.
func (a *App) planFileBytes(ctx context.Context, ch store.Channel, inline bool) ([]byte, error) {
	var source string
	var decisions []room.Decision
	var threads []room.Thread
	err := a.hub.Do(ctx, a.roomChannel(ch), func(r *room.Room) error {
		_, source = r.Source()
		if inline {
			decisions = r.Decisions()
			threads = r.Threads()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if inline {
		source = room.InlineComments(room.InlineDecisions(source, decisions), threads)
	}
	f, err := a.store.PlanFile(ctx, ch.ID)
	if err != nil {
		return nil, err
	}
	return []byte(room.WithLineEnding(source, room.LineEnding(f.LineEnding))), nil
}

// inlineDecisions reads ?decisions=: "inline" or "keep" (the default).
func inlineDecisions(c echo.Context) (bool, error) {
	switch c.QueryParam("decisions") {
	case "", "keep":
		return false, nil
	case "inline":
		return true, nil
	}
	return false, badRequest("invalid-argument", `decisions must be "keep" (the <Decision id> and <Comment id> lines as they are) or "inline" (each card's question and answer, and each accepted comment, as text).`)
}

func (a *App) handlePlanMarkdown(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	inline, err := inlineDecisions(c)
	if err != nil {
		return err
	}
	data, err := a.planFileBytes(c.Request().Context(), ch, inline)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", ch.Slug+".md"))
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", data)
}

// importJSON answers an import: the new document, and a notice when its
// title was taken and it got the next free one.
type importJSON struct {
	channelJSON
	Notice string `json:"notice,omitempty"`
}

func (a *App) handleImport(c echo.Context) error {
	repo, err := a.repository(c)
	if err != nil {
		return err
	}
	if err := a.canWrite(c); err != nil {
		return err
	}
	// The body limit of every route (4 MiB) bounds this read; the plan's own
	// limit is checked by ReadPlanFile.
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, room.MaxSourceBytes+1))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	file, err := room.ReadPlanFile(ctx, data, heldRecords{a.store})
	if err != nil {
		return err
	}
	title := c.QueryParam("title")
	if title == "" {
		title = file.Title
	}
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(c.QueryParam("fileName")), filepath.Ext(c.QueryParam("fileName")))
	}
	if title == "" || title == "." {
		title = "Imported plan"
	}
	if c.QueryParam("title") == "" && utf8.RuneCountInString(title) > store.MaxTitleLength {
		title = string([]rune(title)[:store.MaxTitleLength])
	}
	// A title another document has gets the next free one, as a new
	// document's "Untitled plan" does: importing a file Chopin wrote into
	// the repository it came from makes a copy, not a refusal.
	ch, taken, err := a.store.CreateChannelFreeTitle(ctx, repo.NodeID, title)
	if err != nil {
		return err
	}
	err = a.hub.Do(ctx, a.roomChannel(ch), func(r *room.Room) error {
		_, err := r.ReplaceText(room.WithAuthor(ctx, room.Author{Kind: room.AuthorImport}), r.Plan().Revision, file.Source)
		return err
	})
	if err == nil {
		err = a.store.SetPlanLineEnding(ctx, ch.ID, string(file.LineEnding))
	}
	if err == nil {
		err = a.holdImages(ctx, ch.ID, file.Source)
	}
	if err != nil {
		// Nothing half-made is left behind.
		a.channelDeleting(ch)
		if a.store.DeleteChannel(context.WithoutCancel(ctx), ch.ID) == nil {
			a.channelDeleted(ch)
		}
		return err
	}
	out := importJSON{channelJSON: toChannelJSON(ch)}
	if taken != "" {
		out.Notice = fmt.Sprintf("%s already has a document titled “%s”, so this one is “%s”.", ch.Repository, taken, ch.Title)
	}
	c.Response().Header().Set(echo.HeaderLocation, documentPath(ch))
	return c.JSON(http.StatusCreated, out)
}

// imageRef finds a document image's path in a plan: /images/<sha256>.<ext>.
var imageRef = regexp.MustCompile(`/images/([0-9a-f]{64})\.[a-z]+`)

// holdImages gives the new document channelID its own copy of each image
// its plan shows that another document of this Chopin holds, so the copy
// keeps showing them when the original goes.
func (a *App) holdImages(ctx context.Context, channelID, source string) error {
	seen := map[string]bool{}
	for _, m := range imageRef.FindAllStringSubmatch(source, -1) {
		if seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		img, _, err := a.store.ImageByHash(ctx, m[1])
		if errors.Is(err, store.ErrNotFound) {
			continue // shown as missing, as it was in the file's own document
		}
		if err != nil {
			return err
		}
		if err := a.store.SaveImage(ctx, channelID, img); err != nil {
			return err
		}
	}
	return nil
}

// planSaveJSON answers a save into the checkout.
type planSaveJSON struct {
	Path     string `json:"path"`     // relative to the checkout, with "/"
	FullPath string `json:"fullPath"` // on this computer
	Bytes    int    `json:"bytes"`
	SHA256   string `json:"sha256"`
	Changed  bool   `json:"changed"` // false when the file already held exactly this
}

func (a *App) handlePlanSave(c echo.Context) error {
	ch, err := a.writableChannel(c)
	if err != nil {
		return err
	}
	var req struct {
		Overwrite bool `json:"overwrite"`
	}
	if err := bindStrict(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	owner, name, _ := strings.Cut(ch.Repository, "/")
	repo, err := a.store.RepositoryByName(ctx, owner, name)
	if err != nil {
		return err
	}
	if repo.Path == "" {
		return httpError(http.StatusConflict, "no-checkout",
			fmt.Sprintf("%s has no local checkout to save into; register the folder of its checkout with the repository first.", ch.Repository))
	}
	rel := strings.ReplaceAll(a.cfg.PlanFile, "{slug}", ch.Slug)
	full, err := checkoutFile(repo.Path, rel)
	if err != nil {
		return err
	}
	// The file in a repository reads on its own: decision cards as text.
	data, err := a.planFileBytes(ctx, ch, true)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	out := planSaveJSON{Path: rel, FullPath: full, Bytes: len(data), SHA256: hex.EncodeToString(sum[:]), Changed: true}

	last, err := a.store.PlanFile(ctx, ch.ID)
	if err != nil {
		return err
	}
	onDisk, err := os.ReadFile(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return httpError(http.StatusConflict, "checkout-unreadable", fmt.Sprintf("%s cannot be read: %v", full, err))
	case bytes.Equal(onDisk, data):
		out.Changed = false
	default:
		diskSum := sha256.Sum256(onDisk)
		unchanged := last.SavedPath == rel && last.SavedSHA256 == hex.EncodeToString(diskSum[:])
		if !unchanged && !req.Overwrite {
			why := "was changed on disk since Chopin last saved it"
			if last.SavedPath != rel {
				why = "already exists and was not written by Chopin"
			}
			return httpError(http.StatusConflict, "file-changed",
				fmt.Sprintf("%s %s; save again with overwrite to replace it, or move it aside first.", rel, why))
		}
	}
	if out.Changed {
		if err := writeFileAtomic(full, data); err != nil {
			return httpError(http.StatusConflict, "checkout-unwritable", fmt.Sprintf("%s cannot be written: %v", full, err))
		}
	}
	if err := a.store.RecordPlanSave(ctx, ch.ID, rel, out.SHA256); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// checkoutFile is rel inside the checkout root, refusing any path that
// would leave it (.., an absolute path, a symbolic link out) or touch a
// .git folder, the checkout's or a nested repository's, however the links
// on its way lead (checkout.Resolve, as the checkout tools read). The
// folders it needs are created only below the deepest one that already
// exists and was found inside, so a refused path creates nothing.
func checkoutFile(root, rel string) (string, error) {
	refuse := func(why string) error {
		return httpError(http.StatusConflict, "invalid-plan-path", fmt.Sprintf("Cannot save to %q: %s. Change PLAN_FILE.", rel, why))
	}
	confined := func(err error) error {
		switch {
		case errors.Is(err, checkout.ErrGit):
			return refuse("Chopin never writes inside .git")
		case errors.Is(err, checkout.ErrOutside):
			return refuse("a symbolic link leads out of the checkout")
		}
		return httpError(http.StatusConflict, "checkout-unwritable", fmt.Sprintf("%s cannot be opened: %v", root, err))
	}
	clean := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(clean) {
		return "", refuse("it is not inside the checkout")
	}
	for _, part := range strings.Split(filepath.ToSlash(clean), "/") {
		if strings.EqualFold(part, ".git") {
			return "", refuse("Chopin never writes inside .git")
		}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", httpError(http.StatusConflict, "checkout-unreadable", fmt.Sprintf("The checkout %s cannot be opened: %v", root, err))
	}
	// The deepest folder on the way that exists, with its links followed.
	existing, missing := filepath.Join(realRoot, filepath.Dir(clean)), ""
	for {
		if _, err := os.Lstat(existing); err == nil || existing == realRoot {
			break
		}
		existing, missing = filepath.Dir(existing), filepath.Join(filepath.Base(existing), missing)
	}
	dir, err := checkout.Resolve(realRoot, existing)
	if err != nil {
		return "", confined(err)
	}
	dir = filepath.Join(dir, missing)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", httpError(http.StatusConflict, "checkout-unwritable", fmt.Sprintf("%s cannot be created: %v", dir, err))
	}
	// Again, now that the folders are there: nothing was swapped meanwhile.
	if dir, err = checkout.Resolve(realRoot, dir); err != nil {
		return "", confined(err)
	}
	full := filepath.Join(dir, filepath.Base(clean))
	if info, err := os.Lstat(full); err == nil && !info.Mode().IsRegular() {
		return "", refuse("it is not a regular file")
	}
	return full, nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so the file is either as it was or wholly new.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".chopin-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	os.Chmod(tmp.Name(), 0o644)
	return os.Rename(tmp.Name(), path)
}
