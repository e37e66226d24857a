package room

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/picture"
)

// A document's own images: the pictures a tool made (spec "Images a tool
// made") and the ones the Planner uploads with upload_plan_image (spec
// "Option previews"). This reads a tool's image blocks and the tool's
// input, says in the spec's words why an image is refused, and leaves the
// bytes to package picture, which tells what an image really is and makes
// a smaller copy of one that is too large. The caller stores the result and
// serves it; decoding and encoding are CPU work, so call these outside the
// room's lock.

// ImagePath is where the browser loads a document's image:
// /images/<sha256>.<ext>.
func ImagePath(img picture.Image) string { return "/images/" + img.SHA256 + "." + img.Ext }

const (
	// MaxUploadImageBytes is the most decoded bytes upload_plan_image takes.
	MaxUploadImageBytes = 16 << 20
	// UploadStoredImageBytes is the most bytes an uploaded image is stored
	// with; a larger one is stored as a smaller copy of itself.
	UploadStoredImageBytes = 1 << 20
)

// uploadTypes are the types upload_plan_image takes, exactly as named.
var uploadTypes = map[string]*picture.Type{
	"image/png": picture.PNG, "image/jpeg": picture.JPEG, "image/webp": picture.WebP, "image/gif": picture.GIF,
}

// Refusal codes of an image block Chopin will not host, with the reasons
// the spec gives. Each entry's sentence starts "Image couldn't be shown:".
const (
	RefusedUnsupportedType = "unsupported-type" // its type is not one Chat shows
	RefusedNotBase64       = "not-base64"       // its data is not base64
	RefusedWrongBytes      = "wrong-bytes"      // its bytes are not the type it names, another type, or cut short
	RefusedNoData          = "no-data"          // its block has no data or type
	RefusedTooLarge        = "too-large"        // it did not fit one message (tooLarge)
	RefusedNotStored       = "not-stored"       // Chopin could not store it
	RefusedTooManyPixels   = "too-many-pixels"  // more pixels than Chopin can make smaller
	refusedPrefix          = "Image couldn't be shown: "
)

// RefusedImage is one entry of a message's refusedImages: why an image
// block is not shown, and Before, how many of the message's images come
// before it. Code is for logs and tests; the wire carries the sentence.
type RefusedImage struct {
	Code   string `json:"-"`
	Reason string `json:"reason"`
	Before int    `json:"before"`
}

func refuse(code, why string) *RefusedImage {
	return &RefusedImage{Code: code, Reason: refusedPrefix + why + "."}
}

// ToolImage is one image block of a tool's result: the Image to store, or
// why it is refused. Alt and Caption are kept as given (nil when absent or
// not a string).
type ToolImage struct {
	Image   picture.Image
	Alt     *string
	Caption *string
	Refused *RefusedImage
}

// NotStored marks an image the caller could not store: it is refused with
// the spec's reason, which gives no detail of the failure (log that).
func (ti *ToolImage) NotStored() {
	ti.Refused = refuse(RefusedNotStored, "Chopin could not store it")
}

// ToolResultContent is what a tool's result holds in its content array:
// the text blocks and every image block, in the order of the blocks.
type ToolResultContent struct {
	Text   []string
	Images []ToolImage
}

// ReadToolResult reads the content array of an own tool's final successful
// result (the object, or its JSON text): the text blocks, and each image
// block checked and, when larger than maxStoredBytes or picture.MaxSide, made
// smaller. ok is false when the result has no content array: it is shown
// as it is. A preliminary or failed result shows no images: do not call it
// for one.
func ReadToolResult(result json.RawMessage, maxStoredBytes int64) (content ToolResultContent, ok bool) {
	var text string
	if json.Unmarshal(result, &text) == nil {
		result = json.RawMessage(text)
	}
	var shape struct {
		Content []json.RawMessage `json:"content"`
	}
	if json.Unmarshal(result, &shape) != nil || shape.Content == nil {
		return content, false
	}
	for _, raw := range shape.Content {
		var block map[string]json.RawMessage
		if json.Unmarshal(raw, &block) != nil {
			continue
		}
		typ := jsonString(block["type"])
		if typ == nil {
			continue
		}
		switch *typ {
		case "text":
			if s := jsonString(block["text"]); s != nil {
				content.Text = append(content.Text, *s)
			}
		case "image":
			content.Images = append(content.Images, readImageBlock(block, maxStoredBytes))
		}
	}
	return content, true
}

func jsonString(raw json.RawMessage) *string {
	var s string
	if raw == nil || string(raw) == "null" || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

// readImageBlock checks one image block and makes what to store.
func readImageBlock(block map[string]json.RawMessage, maxStoredBytes int64) ToolImage {
	ti := ToolImage{Alt: jsonString(block["alt"]), Caption: jsonString(block["caption"])}
	// A block with tooLarge is never stored, whatever else it holds.
	if raw, ok := block["tooLarge"]; ok && string(raw) != "null" {
		why := "it did not fit in one message"
		var n float64
		if json.Unmarshal(raw, &n) == nil && n > 0 {
			why += fmt.Sprintf(" (%s)", megabytes(int64(n)))
		}
		ti.Refused = refuse(RefusedTooLarge, why)
		return ti
	}
	data, mimeType := jsonString(block["data"]), jsonString(block["mimeType"])
	if data == nil || *data == "" || mimeType == nil || strings.TrimSpace(*mimeType) == "" {
		ti.Refused = refuse(RefusedNoData, "its block has no data or type")
		return ti
	}
	t := picture.Lookup(*mimeType)
	if t == nil {
		ti.Refused = refuse(RefusedUnsupportedType, fmt.Sprintf("its type, %s, is not one Chat shows", shownType(*mimeType)))
		return ti
	}
	raw, err := decodeBase64(*data)
	if err != nil {
		ti.Refused = refuse(RefusedNotBase64, "its data is not base64")
		return ti
	}
	img, refusal := prepareImage(t, raw, maxStoredBytes)
	ti.Image, ti.Refused = img, refusal
	return ti
}

// prepareImage checks raw against type t and makes what to store.
func prepareImage(t *picture.Type, raw []byte, maxStoredBytes int64) (picture.Image, *RefusedImage) {
	w, h, err := picture.Measure(t, raw)
	if err != nil {
		return picture.Image{}, refuse(RefusedWrongBytes, err.Error())
	}
	img, err := picture.Fit(t, raw, w, h, maxStoredBytes)
	var tmp *picture.TooManyPixelsError
	switch {
	case errors.As(err, &tmp):
		return picture.Image{}, refuse(RefusedTooManyPixels, err.Error())
	case err != nil:
		return picture.Image{}, refuse(RefusedNotStored, "Chopin could not store it")
	}
	return img, nil
}

// decodeBase64 reads standard base64 with or without its = padding (line
// breaks are skipped, as the standard decoder does).
func decodeBase64(s string) ([]byte, error) {
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "=\r\n"))
}

// shownType is a tool's mimeType fit to quote in a sentence.
func shownType(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if utf8.RuneCountInString(s) > 64 {
		s = string([]rune(s)[:64]) + "…"
	}
	return s
}

func megabytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// PlaceImages lays out a turn's image blocks on its message: shown are the
// images to show, in order, and refused the refusedImages entries, one per
// refused block in the order of the blocks, each with Before counted from
// before, the number of the message's images already shown.
func PlaceImages(images []ToolImage, before int) (shown []ToolImage, refused []RefusedImage) {
	for _, ti := range images {
		if ti.Refused != nil {
			r := *ti.Refused
			r.Before = before + len(shown)
			refused = append(refused, r)
			continue
		}
		shown = append(shown, ti)
	}
	return shown, refused
}

// The upload_plan_image host tool (spec "Option previews"), offered only to
// a client that asked for decision-option-previews.

// ToolUploadPlanImage is the name of the upload_plan_image host tool.
const ToolUploadPlanImage = "upload_plan_image"

// UploadPlanImageTool is its spec as a turn offers it.
var UploadPlanImageTool = ToolSpec{
	Name: ToolUploadPlanImage,
	Description: "Store an image you made (a PNG, JPEG, WebP or GIF, at most 16 MiB) in this document's own images and get the Markdown that shows it: " +
		"use it in an option's preview, a question's body or the plan. The same bytes give the same path. " +
		"alt is required: one line of at most 200 characters saying what the image shows. An image over 1 MiB is stored as a smaller copy of itself.",
	InputSchema: json.RawMessage(`{"type":"object","required":["data","mimeType","alt"],"properties":{` +
		`"data":{"type":"string","description":"The image's bytes in standard base64, at most 16 MiB decoded."},` +
		`"mimeType":{"type":"string","enum":["image/png","image/jpeg","image/webp","image/gif"]},` +
		`"alt":{"type":"string","minLength":1,"maxLength":200,"description":"What the image shows, in words, on one line."}` +
		`},"additionalProperties":false}`),
}

// UploadImageArgs is upload_plan_image's input.
type UploadImageArgs struct {
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Alt      string `json:"alt"`
}

// UploadImageResult is upload_plan_image's output.
type UploadImageResult struct {
	Path     string `json:"path"`
	Markdown string `json:"markdown"`
}

// MaxImageAlt is the most characters (code points) an image's alt holds.
const MaxImageAlt = 200

// PrepareUpload checks upload_plan_image's input and makes the Image to
// store: the bytes themselves, or a smaller copy when they are over
// min(UploadStoredImageBytes, maxStoredBytes) or picture.MaxSide. The same
// bytes always give the same Image. The caller checks the document and
// the turn, stores the image and answers with UploadResult.
func PrepareUpload(args UploadImageArgs, maxStoredBytes int64) (picture.Image, error) {
	if err := checkAlt(args.Alt); err != nil {
		return picture.Image{}, err
	}
	t := uploadTypes[args.MimeType]
	if t == nil {
		return picture.Image{}, errorf(CodeUnsupportedImage, "mimeType must be image/png, image/jpeg, image/webp or image/gif; it was %q.", shownType(args.MimeType))
	}
	if base64.StdEncoding.DecodedLen(len(args.Data)) > MaxUploadImageBytes+3 {
		return picture.Image{}, errorf(CodeImageTooLarge, "The image is over 16 MiB (16777216 bytes), the most upload_plan_image takes. Make it smaller and upload it again.")
	}
	raw, err := decodeBase64(args.Data)
	if err != nil || len(raw) == 0 {
		return picture.Image{}, errorf(CodeInvalidArgument, "data must be the image's bytes in standard base64.")
	}
	if len(raw) > MaxUploadImageBytes {
		return picture.Image{}, errorf(CodeImageTooLarge, "The image is %d bytes, over 16 MiB (16777216 bytes), the most upload_plan_image takes. Make it smaller and upload it again.", len(raw))
	}
	w, h, err := picture.Measure(t, raw)
	if err != nil {
		return picture.Image{}, errorf(CodeImageTypeMismatch, "The image does not match mimeType %s: %s. Send the bytes with the type they are.", t.MimeType(), strings.TrimPrefix(err.Error(), "its "))
	}
	img, err := picture.Fit(t, raw, w, h, min(UploadStoredImageBytes, maxStoredBytes))
	var tmp *picture.TooManyPixelsError
	switch {
	case errors.As(err, &tmp):
		return picture.Image{}, errorf(CodeImageTooManyPixels, "The image is %d × %d pixels, more than Chopin can make smaller (at most %d pixels). Make it smaller and upload it again.", w, h, picture.MaxPixels)
	case err != nil:
		return picture.Image{}, fmt.Errorf("upload_plan_image: %w", err)
	}
	return img, nil
}

func checkAlt(alt string) error {
	switch n := utf8.RuneCountInString(alt); {
	case strings.TrimSpace(alt) == "":
		return errorf(CodeInvalidArgument, "alt is required: say in words what the image shows, on one line of at most %d characters.", MaxImageAlt)
	case strings.ContainsAny(alt, "\r\n\u2028\u2029\u0085"):
		return errorf(CodeInvalidArgument, "alt must be one line; write it without line breaks.")
	case n > MaxImageAlt:
		return errorf(CodeInvalidArgument, "alt is %d characters; it may have at most %d.", n, MaxImageAlt)
	case !utf8.ValidString(alt):
		return errorf(CodeInvalidArgument, "alt must be UTF-8 text.")
	}
	return nil
}

// UploadResult is upload_plan_image's answer for a stored image: its path
// and the Markdown that shows it with alt.
func UploadResult(img picture.Image, alt string) UploadImageResult {
	return UploadImageResult{Path: ImagePath(img), Markdown: "![" + escapeAlt(alt) + "](" + ImagePath(img) + ")"}
}

// escapeAlt keeps alt text inside the brackets of ![alt](path).
func escapeAlt(alt string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(alt)
}
