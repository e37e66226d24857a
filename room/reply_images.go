package room

// The images a turn made, on its Planner message (spec "Images a tool
// made"): every image from any call goes on the turn's one message, in the
// order they were made, with refusedImages for the blocks not shown. The
// caller reads, checks and stores the images outside the room's lock
// (ReadToolResult, store), then hands them here in order.

// ReplyImage is one image on a Planner message: the document's own image
// at Path, shown labelled as generated. Alt and Caption are kept as the
// tool gave them (absent when it gave none).
type ReplyImage struct {
	Path     string  `json:"path"` // /images/<sha256>.<ext>
	MimeType string  `json:"mimeType"`
	Width    int     `json:"width"`
	Height   int     `json:"height"`
	Alt      *string `json:"alt,omitempty"`
	Caption  *string `json:"caption,omitempty"`
}

// AddImages puts one result's image blocks on the reply: the stored ones
// shown after the images it has, the refused ones listed with how many of
// its images come before each. Each image a block holds must be stored
// already (or marked NotStored).
func (p *PlannerReply) AddImages(images []ToolImage) {
	if len(images) == 0 {
		return
	}
	r := p.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.done {
		return
	}
	shown, refused := PlaceImages(images, len(p.details.Images))
	size := 0
	for _, ti := range shown {
		size += imageBytes(ti)
	}
	for _, ri := range refused {
		size += len(ri.Reason) + 16
	}
	if p.detailsKept+size > MaxReplyDetails {
		p.droppedImages += len(shown)
		return
	}
	p.detailsKept += size
	for _, ti := range shown {
		p.details.Images = append(p.details.Images, ReplyImage{Path: ImagePath(ti.Image), MimeType: ti.Image.MimeType,
			Width: ti.Image.Width, Height: ti.Image.Height, Alt: ti.Alt, Caption: ti.Caption})
	}
	p.details.RefusedImages = append(p.details.RefusedImages, refused...)
	p.flushLocked()
	m := msgChatImages{Type: "chat:images", Message: p.msg.ID,
		Images: append([]ReplyImage{}, p.details.Images...), RefusedImages: append([]RefusedImage{}, p.details.RefusedImages...)}
	r.broadcastLocked(m)
	p.changedLocked()
}

// imageBytes is what an image on the reply counts against MaxReplyDetails.
func imageBytes(ti ToolImage) int {
	n := 128 + len(ti.Image.SHA256) + len(ti.Image.MimeType)
	if ti.Alt != nil {
		n += len(*ti.Alt)
	}
	if ti.Caption != nil {
		n += len(*ti.Caption)
	}
	return n
}

// msgChatImages is the reply's images and refusedImages as they are now;
// each replaces the last.
type msgChatImages struct {
	Type          string         `json:"type"` // chat:images
	Message       string         `json:"message"`
	Images        []ReplyImage   `json:"images"`
	RefusedImages []RefusedImage `json:"refusedImages"`
}
