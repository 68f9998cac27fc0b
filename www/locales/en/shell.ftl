# The handheld's words in English: the reference for every other locale.
# Ids are the ones the code names (www/app/l10n.js says how); a value is
# what the screen shows, an attribute (.aria-label, .title, .placeholder,
# .next) a word for the same place. Codes, bins, EPCs and GS1 values come
# in as arguments and are never translated.

## The status bar and the banners

bar-waiting = { $count ->
    [one] waiting
   *[other] waiting
  }
bar-oldest = oldest { $age }
bar-attention = { $count } to decide
bar-cache = cache { $age }
bar-cache-none = cache –
bar-cache-loading = cache { $units } units…
bar-label = { $figures }. Opens the queue screen.
bar-label-waiting = { $count } waiting
net-refused = Not allowed
net-no-site = No site
net-online = Online
net-offline = Offline
menu-button = Menu
    .aria-label = Menu
worker-starting = starting…
worker-ready = ready
worker-not-secure = Not secure: open this site over https:// (trust the site CA from /trust.html first).
worker-no-support = No service worker support: scans cannot be kept offline.
banner-refused = This handheld is no longer allowed on the site: ask a supervisor to set it up again.
banner-refused-kept = Every scan stays kept on this handheld and goes once it is set up again.
banner-training = TRAINING
banner-training-words = This handheld is not commissioned: the site records its scans as practice and moves nothing.
late-show = Show them
late-seen = Seen
release-reload = Reload
reference-loading = Loading reference data: { $units } units so far
reference-partial = Reference data: { $units } units so far; the load resumes from there
starting-placeholder = starting: scans are kept
starting-words = Starting: what is scanned now is kept and read in a moment.

## Spans of time

ago-seconds = { $n } s
ago-minutes = { $n } min
ago-hours = { $n } h
ago-days = { $n } d
ago-none = –

## Device setup

setup-title = Set up this handheld
setup-language = Language of this handheld
setup-language-operator = While an operator who reads another language is signed in, the handheld speaks theirs; this one comes back at sign-out.
setup-hint = Open the setup link the site's view shows as a QR code, or enter the three values { $command } printed.
setup-site-url = Site URL
setup-device-id = Device id
setup-device-token = Device token
setup-save = Save
setup-anyway = Save anyway: the site is down for now
back = Back

## The picker and signing in

picker-operator = Operator
operator-change = Change
operator-signout = Sign out
picker-choose = Choose a mode
picker-sign-in = Sign in
picker-scan-badge = Scan your operator badge
picker-scan-badge-first = Scan your operator badge first
picker-tap-mode = Tap a mode
picker-session-closed = A supervisor closed this session at the site. Nothing scanned after that counts: scan your badge to start again.
picker-no-profile = This device does not know its profile yet: it reads it from the site once online.
picker-no-modes = Profile { $profile } runs no handheld mode.
picker-device = { $device } · { $profile }
picker-summary = { $count ->
    [one] { $mode } closed: { $count } scan, { $applied } applied, { $refused } refused, { $waiting } waiting to go. The queue screen lists each.
   *[other] { $mode } closed: { $count } scans, { $applied } applied, { $refused } refused, { $waiting } waiting to go. The queue screen lists each.
  }
picker-summary-undone = { $count ->
    [one] { $mode } closed: { $count } scan, { $applied } applied, { $undone } of them undone, { $refused } refused, { $waiting } waiting to go. The queue screen lists each.
   *[other] { $mode } closed: { $count } scans, { $applied } applied, { $undone } of them undone, { $refused } refused, { $waiting } waiting to go. The queue screen lists each.
  }
session-open-failed = Could not open the session: { $error }
sign-in-not-known = { $code } is not an operator badge the site knows
sign-in-refused = { $why }: not signed in. Scan your own badge.
signed-in = Signed in: { $operator }
signed-out = { $operator } signed out.
signed-out-idle = Signed out after { $idle } without a scan. Scan your badge to go on.
operator-label = { $name } ({ $badge })

## The mode screen

mode-needs =
    .aria-label = What this mode needs
results-label =
    .aria-label = Last scans
switch-mode = Switch mode
close-session = Close session
mode-need-missing = needs

## The queue screen

queue-title = Queue
queue-retry = Retry now
queue-refresh = Refresh
queue-filters =
    .aria-label = Show
queue-filter-all = All
queue-filter-decide = To decide
queue-more = More

## The menu

menu-title = Menu
menu-refresh = Refresh reference data
menu-commands = Command barcodes
menu-setup = Device setup
menu-idle = Sign out after idle
menu-counts-legend = Beside the scan box, since this page opened: ✓ scans captured on this handheld, ✗ scans it could not write (scan them again), ⊘ scans turned away before capture (each line says why). What the site refuses later is on the Queue.
menu-signals-on = Sound and vibration: on
menu-signals-off = Sound and vibration: off
menu-idle-minutes = { $n } min
menu-idle-hours = { $n } h
menu-not-set-up = Not set up.
menu-device = { $device } → { $site }
menu-device-profile = { $device } · { $profile } → { $site }
menu-device-encodes = { $device } · { $profile } · encodes → { $site }
menu-reference = Reference copy: { $units } units, { $bins } bins, { $grns } GRNs, { $counts } counts; { $age } old
menu-reference-loading = Reference copy: { $units } units, { $bins } bins, { $grns } GRNs, { $counts } counts; { $age } old (loading)
menu-reference-never = Reference copy: { $units } units, { $bins } bins, { $grns } GRNs, { $counts } counts; never complete
menu-reference-never-loading = Reference copy: { $units } units, { $bins } bins, { $grns } GRNs, { $counts } counts; never complete (loading)
menu-reference-none = Reference copy: –
menu-reference-read = Reference data read.
storage-persist-granted = Persistent storage granted.
storage-persist-advice = Persistent storage NOT granted: the browser may clear what this handheld holds when space runs low. Add Stockhop to the home screen (browser menu → Install app or Add to Home screen), or allow this site to store data in the browser's site settings, then open this menu again. Until then, let the queue drain before the device runs short of space.
storage-unavailable = Storage estimate unavailable.
storage-estimate = Using { NUMBER($used, maximumFractionDigits: 1, minimumFractionDigits: 1) } MB of { NUMBER($quota, maximumFractionDigits: 0) } MB

## The scan dock and the dialogs

dock-scan = Scan
dock-input =
    .placeholder = waiting for the scanner
dock-counts =
    .aria-label = Scans since this page opened (the menu explains)
dock-captured-title =
    .title = captured
dock-captured = {" "}captured
dock-failed-title =
    .title = could not be written
dock-failed = {" "}could not be written
dock-refused-title =
    .title = turned away before capture
dock-refused = {" "}turned away
alert-ack = Acknowledge
alert-acknowledged = Alert acknowledged.
no-reply = no reply

## Scans turned away before capture

scan-answer-first = Answer the question first: { $code } was not captured.
scan-not-captured = { $code } was not captured.
scan-again = Scan it again.
scan-no-constants = Not captured: { $code }. This handheld has not read the site's settings yet; reconnect to the site and scan again.
scan-alert-first = Acknowledge the alert first: { $code } was not captured.
scan-mode-first = Choose a mode first: { $code } was not captured.
scan-unknown-mode = unknown mode { $mode }
scan-not-captured-why = Not captured: { $error }
scan-badge-named = That is { $name }'s badge ({ $badge }): not captured.
scan-badge = That is operator { $badge }'s badge: not captured.
scan-prompt-again = { $prompt }.
scan-nothing-to-confirm = Nothing to confirm.
signed-out-close = { $operator } signed out (CLOSE).
signed-out-nobody = No one signed in.

## The mode screen's head

session-open = Open: { $operator } · { $session }
session-read-only = { $operator } · read only
session-not-open = Not open yet
scan-bin-units = Bin { $bin }: scan its units
scan-bin-first = Scan a bin label first.

## Find a unit

mode-find_unit = Find a unit
mode-find_unit-blurb = Where is it? From this device, offline too.
find-prompt = Scan a tag, serial or unit label
find-prompt-small = answered from this device
find-not-known = { $code }: not known
find-age = From this device's copy, { $age } old.
find-no-gs1-unit = { $code }: no unit with this GTIN and serial in this device's copy
find-not-in-copy = { $code }: not in this device's copy
find-place = { $bin } · zone { $zone } · { $location }
find-no-bin-lower = no bin
find-bin = Bin { $bin }
find-no-bin = No bin
find-state = State
find-where = Where
find-sku = SKU
find-epc = EPC
find-serial = Serial
find-gtin = GTIN
find-gs1-serial = GS1 serial
find-lot = Lot
find-expiry = Expiry
find-result = { $epc }: { $state }, { $bin }

## Questions

setup-switch-title = Switch to { $device } at { $site }?
setup-switch-text = { $count ->
    [one] This handheld holds { $count } scan of { $device } at { $site } not yet settled. They stay on this device either way (the queue screen shows them), but from now on they go out under the new setup. Let them drain first unless a supervisor says otherwise.
   *[other] This handheld holds { $count } scans of { $device } at { $site } not yet settled. They stay on this device either way (the queue screen shows them), but from now on they go out under the new setup. Let them drain first unless a supervisor says otherwise.
  }
setup-switch-yes = Switch
setup-switch-no = Stay { $device }
setup-switch-how = Tap “{ $no }”, or scan CONFIRM to switch.
count-close-title = Close count { $count }?
count-close-text = This closes the count for all of zone { $zone }; the site then works out the variance.
count-close-text-figures = This closes the count for all of zone { $zone }; the site then works out the variance. Missing { $missing }, unexpected { $unexpected } (the site's figures { $age } old, and this device's scans since).
count-close-yes = Close the count
count-close-no = Keep counting
count-close-how = Tap “{ $no }”, or scan CONFIRM to close the count.

## What a code is, when it is not what the screen takes

sign-in-not-badge-kind = { $kind ->
    [tag] { $code } is a tag, not an operator badge
    [bin] { $code } is a bin label, not an operator badge
    [grn] { $code } is a GRN, not an operator badge
    [count] { $code } is a count session, not an operator badge
   *[unit] { $code } is the serial of unit { $epc }, not an operator badge
  }
put-other-kind = { $kind ->
    [grn] { $code } is a GRN, not a unit or a bin label: not captured.
   *[count] { $code } is a count session, not a unit or a bin label: not captured.
  }
put-neither = { $code } is neither a unit nor a bin label the site knows: not captured.
put-still = The bin is still { $bin }: scan a unit for it, or another bin label.
put-bin-then-units = Scan the bin's label, then its units.
put-prompt-units = Scan units for bin { $bin }
put-prompt-other-bin = or another bin label
put-prompt-wait = unit scans wait for it
prompt-bin = Scan a bin label
bin-need = bin { $bin }
bin-need-none = bin label
bin-first = Scan a bin label first: { $code } was not captured.
mode-put_away = Put-away
mode-put_away-blurb = Scan a bin label, then its units.

## GS1 labels

label-refused = Not captured: { $why }.
label-refused-next = Nothing of it was used. Scan it again; a label refused twice is misprinted: set the item aside for a new label.
label-sscc = SSCC { $value }
label-gtin = GTIN { $value }
label-serial = serial { $value }
label-lot = lot { $value }
label-expiry = expiry { $value }
label-what = { $text } ({ $keys })
label-no-unit = { $what }: no unit has this GTIN and serial, in this device's copy or at the site: not captured.
label-no-unit-next = Scan the unit's tag instead, or ask a supervisor to import its GTIN and serial.
label-pallet = { $what } is a pallet's label: { $mode } takes a unit's, not captured.
label-sku-lot = { $what } names a SKU and lot, not one unit: not captured.
label-sku-lot-next = { $prompt }: the unit's own label or tag.
label-nothing = { $what } names no unit, pallet or lot: not captured.

## Cycle count

mode-cycle_count = Cycle count
mode-cycle_count-blurb = Count a zone bin by bin.
count-need = count { $count }
count-need-none = count session
count-prompt-choose = Scan or tap a count session
count-prompt-tags = Scan tags in bin { $bin }
count-prompt-next-bin = or the next bin label
count-prompt-zone = zone { $zone }
count-none-open = No open count in this device's copy: scan one.
count-choice = { $location } · zone { $zone }
count-unknown = Not a count this device knows: { $count }
offline-scan-again = Offline: scan it again once the site answers.
count-check-sheet = Check the count sheet.
count-not-open = Count { $count } is { $state }: it takes no scans
count-tap-open = Tap a count that is open.
count-chosen = Count { $count } · zone { $zone }
count-epcs-more = { $epcs } and { $more } more
count-seen = Seen
count-expected = / expected
count-missing = Missing
count-unexpected = · unexpected
count-missing-list = Missing: { $epcs }
count-unexpected-list = Unexpected: { $epcs }
count-age = Zone { $zone } at { $location }. The site's figures { $age } old; +{ $since } { $since ->
    [one] tag
   *[other] tags
  } from this device since, { $waiting } of them waiting to go.
count-age-unread = Zone { $zone } at { $location }. The site's figures: not read yet (offline); +{ $since } { $since ->
    [one] tag
   *[other] tags
  } from this device since, { $waiting } of them waiting to go.
count-age-bin = Zone { $zone } at { $location }, bin { $bin } only. The site's figures { $age } old; +{ $since } { $since ->
    [one] tag
   *[other] tags
  } from this device since, { $waiting } of them waiting to go.
count-age-bin-unread = Zone { $zone } at { $location }, bin { $bin } only. The site's figures: not read yet (offline); +{ $since } { $since ->
    [one] tag
   *[other] tags
  } from this device since, { $waiting } of them waiting to go.
count-bin-only = This count is of bin { $bin } only: { $code } is not counted
count-scan-tags-in = Scan tags in bin { $bin }.
count-other-zone = Bin { $bin } is in zone { $zone }, not this count's zone { $count_zone }
count-scan-zone-bin = Scan a bin of this count's zone.
count-bin-then-tags = Scan the bin's label, then its tags.
count-not-tag = { $code }: not a tag or a bin label
count-tag-or-bin = Scan a tag or a bin label.

## Dispatch verify

mode-dispatch_verify = Dispatch verify
mode-dispatch_verify-blurb = Check tags against the live manifest.
dispatch-offline = Offline: dispatch verify reads the live manifest and cannot open until the site answers. Reconnect and scan the manifest again.
dispatch-offline-resume = Offline: the manifest is read live; scan it again once the site answers.
dispatch-need = manifest { $manifest }
dispatch-need-none = manifest (live)
dispatch-prompt = Scan the manifest
dispatch-prompt-small = read live from the site
dispatch-prompt-tags = Scan tags for { $manifest }
dispatch-prompt-tags-small = a tag not on it stops the dock
dispatch-no-answer = Dispatch verify did not open: the site does not answer ({ $manifest })
dispatch-no-manifest = No manifest { $manifest } on the site
dispatch-answered = Manifest { $manifest }: the site answered { $status }
dispatch-not-ready = Manifest { $manifest } is { $state }: not ready for dispatch
dispatch-close-first = Close this session to verify another manifest than { $manifest }
dispatch-read-again = Manifest { $manifest } read again
dispatch-opened = Manifest { $manifest }: { $units } unit(s)
tick-verified = verified
tick-waiting = verified here, waiting to go
tick-undo-waiting = undone here, waiting to go
tick-not-verified = not verified
dispatch-verified = Verified
dispatch-waiting-here = ({ $count } waiting here)
dispatch-age = The site's manifest read { $age } ago, with its answers since; { $waiting } { $waiting ->
    [one] scan
   *[other] scans
  } of this device waiting to go.
dispatch-units =
    .aria-label = Units on the manifest
dispatch-unit = { $epc }: { $tick }
dispatch-unit-pallet = { $epc } on pallet { $sscc }: { $tick }
dispatch-pallet = · pallet { $sscc }
dispatch-manifest-first = Scan the manifest first: { $code } was not captured.
dispatch-manifest-first-next = Scan the manifest, then its pallets and tags.
dispatch-pallet-shown = { $units ->
    [one] { $code } (pallet, { $units } unit)
   *[other] { $code } (pallet, { $units } units)
  }
dispatch-not-on = Not on the manifest
dispatch-pallet-not-on = Pallet { $sscc } is not on { $manifest }. Take it off the dock, then acknowledge.
dispatch-not-tag = { $code }: not a tag
dispatch-tag-not-on = { $epc } is not on { $manifest }. Take it off the dock, then acknowledge.

## Receive

mode-receive = Receive
mode-receive-blurb = Count tags against a GRN.
receive-grn = GRN { $grn }
receive-need-none = GRN
receive-prompt = Scan or tap a GRN
receive-prompt-small = receiving needs a GRN with QC accepted
receive-prompt-tags = Scan tags for { $grn }
receive-prompt-sku = new tags are SKU { $sku }
receive-prompt-sku-lot = new tags are SKU { $sku } { $keys }
receive-prompt-sku-first = a tag the site does not know needs its SKU label first
receive-none-waiting = No GRN waiting in this device's copy: scan one.
receive-choice = { $lines } line(s) · { $state }
receive-qc = QC { $qc }
receive-encode-on = Encode tags: on
receive-encode-off = Encode tags: off
receive-no-sku = No SKU label scanned
receive-sku = SKU { $sku }
receive-sku-lot = SKU { $sku } · { $lot }
receive-last-label = Last label: { $epc } · { $lot }
receive-last-label-sku = Last label: { $epc } · SKU { $sku } · { $lot }
receive-grn-not-cached = This GRN is not in the device's copy yet.
receive-expected = Expected
receive-received = Received
receive-queued-here = Queued here
receive-age = Received as the site said { $age } ago, with its answers since; queued here: this device's scans waiting to go.
receive-age-never = Received as the site said (never read), with its answers since; queued here: this device's scans waiting to go.
receive-unknown-grn = Not a GRN this device knows: { $grn }
receive-check-papers = Check the number with the delivery papers.
receive-qc-not-accepted = GRN { $grn }: QC { $qc }; receiving needs accepted
receive-ask-qc = Ask QC; receive another GRN meanwhile.
receive-lot = lot { $lot } · expiry { $expiry }
receive-not-grn = { $code } is not a GRN: not captured.
receive-grn-first = Scan or tap a GRN first.
receive-gtin-no-sku = GTIN { $gtin } names no SKU in this device's copy: not captured.
receive-gtin-no-sku-next = Scan the SKU's own label, or ask a supervisor to import the SKU's GTIN.
receive-sku-not-on = SKU { $sku } (GTIN { $gtin }) is not on { $grn }: not captured.
receive-check-delivery = Check the delivery against the GRN.
receive-not-tag = { $code }: not a tag, nor a SKU of { $grn }
receive-tag-gtin-no-sku = { $epc }: GTIN { $gtin } names no SKU in this device's copy; scan its SKU label first
receive-tag-unknown = { $epc }: the site does not know this tag; scan its SKU label first

## What the ledger's answers mean: every reason a sync result can carry
## (stockhop::reason::ALL) and every code that blocks an item, in words
## and with what to do next (.next), as docs/design.md §5.4 words them.

reason-stale_state = The unit changed on the site after this device last read it.
    .next = Re-scan it (the device reads the unit again first), or acknowledge.
reason-session_not_open = This scan's session never opened on the site.
    .next = Look at the session's first item (why it was refused), then start a new session.
reason-session_already_opened = This session was already opened.
    .next = Nothing to do; acknowledge.
reason-session_already_closed = This session was already closed.
    .next = Nothing to do; acknowledge.
reason-session_closed = A supervisor closed this session at the site before this scan was taken.
    .next = Scan your badge to start a new session, then scan it again.
reason-undo_window_expired = Undo came more than 2 minutes after the scan.
    .next = Ask a supervisor to correct it (it is on their list).
reason-unknown_target = The site never received the scan this undo names.
    .next = Acknowledge; check the scan itself on the queue.
reason-cannot_undo_an_undo = An undo cannot be undone.
    .next = Scan the item again if it should stand.
reason-target_rejected = The scan was refused, so there is nothing to undo.
    .next = Acknowledge.
reason-target_not_undoable = That scan changed nothing that can be undone.
    .next = Acknowledge; ask a supervisor if something must change.
reason-target_not_applied = The scan has not been applied yet.
    .next = Wait for it to apply, then undo again.
reason-target_not_rejected = That item was not refused, so there is nothing to acknowledge.
    .next = Nothing to do.
reason-unknown_operator = This badge is not on the site's list of operators.
    .next = Scan your own badge, or ask a supervisor to add you.
reason-mode_not_allowed = This device cannot do that (its profile).
    .next = Use a handheld that can; ask a supervisor about this device.
reason-read_only_mode = Find a unit never changes anything on the site.
    .next = Nothing to do; acknowledge.
reason-unknown_bin = The site has no bin with this label.
    .next = Scan the bin's label again, or ask a supervisor to add the bin.
reason-unknown_unit = The site does not know this tag or serial.
    .next = Set the unit aside and tell a supervisor.
reason-unit_state = This unit cannot be put away: it is dispatched or missing.
    .next = Set it aside and tell a supervisor.
reason-grn_not_accepted = This GRN is unknown, or QC has not accepted it.
    .next = Check the GRN number; ask QC or a supervisor.
reason-not_on_grn = This unit's SKU is not on the GRN.
    .next = Set it aside; tell a supervisor (wrong GRN or wrong delivery).
reason-excess_line = The GRN line already has every unit it expects.
    .next = Set the extra unit aside and tell a supervisor.
reason-already_received = This unit was received already.
    .next = Set it aside; it may be a duplicate tag.
reason-count_not_open = The count is closed, approved or cancelled.
    .next = Pick an open count, or ask a supervisor to open one.
reason-manifest_not_ready = The manifest is unknown, or not packing or dispatched.
    .next = Check the manifest number; ask a supervisor.
reason-not_on_manifest = This unit is not on the manifest.
    .next = Keep it off the truck and tell a supervisor.
reason-INVALID_ITEM = The scan is missing something the site needs, or names another session's GRN, count or manifest.
    .next = Discard it and scan again; tell a supervisor if it repeats.
reason-SESSION_CONFLICT = This device or operator already has another session open on the site.
    .next = Sign out on the other handheld; if it is lost or was reset, ask a supervisor to close its session on the site's view (Devices, Close session). Then discard this and start again.
reason-SESSION_NOT_YOURS = The session belongs to another device.
    .next = Discard it and start a new session.
reason-SEQ_ALREADY_USED = The site already holds another item in this place of the session.
    .next = Discard it; scan again if it should stand.
reason-IDEMPOTENCY_KEY_REUSED = The site holds a different item under the same key.
    .next = Discard it and scan again.
reason-IDEMPOTENCY_RECEIPT_UNAVAILABLE = The site cannot read its answer for this item.
    .next = Tell a supervisor; do not scan it again until they say.
reason-ALREADY_UNDONE = The scan was undone already.
    .next = Discard it.
reason-UNIT_CONFLICT = The tag or serial belongs to another unit on the site.
    .next = Set the unit aside and tell a supervisor.
reason-CONSTRAINT_CONFLICT = The site refused it as conflicting with what it holds.
    .next = Discard it; tell a supervisor if it repeats.
reason-http = The site refused this scan as sent.
    .next = Discard it and scan again; tell a supervisor if it repeats.
reason-waiting-behind = Waiting behind a blocked scan of its session.
    .next = Decide the blocked scan on the queue screen.
reason-other = The site refused this scan.
    .next = Show it to a supervisor.

## What each scan came to

outcome-pending = writing…
outcome-kept = kept on this device
outcome-applied = applied
outcome-training = recorded as training: nothing moved
outcome-refused = refused
outcome-blocked = blocked: decide on the queue screen
outcome-voided = discarded
outcome-failed = not captured
outcome-undone = undone
outcome-held = kept on this device, NOT sent: this handheld is not allowed on the site
outcome-refused-seq = Refused #{ $seq }: { $words }
undo = Undo
results-fewer = Show the last few only
results-more = { $count ->
    [one] Show { $count } earlier scan
   *[other] Show { $count } earlier scans
  }
late-refused = { $count ->
    [one] { $count } scan refused by the site after it was kept here.
   *[other] { $count } scans refused by the site after they were kept here.
  }
reason-words-next = { $words } { $next }
capture-not-open = The session is not open yet.
capture-to-bin = { $code } → { $bin }
capture-row = #{ $seq } { $code }
capture-row-note = #{ $seq } { $code } · { $note }
capture-kept = Kept on this device #{ $seq }: { $code }
capture-kept-held = Kept on this device #{ $seq }: { $code }, NOT sent: this handheld is not allowed on the site
capture-failed-row = { $code }: NOT captured ({ $error })
capture-failed = NOT captured { $code }: { $error }
undo-no-session = no open session to record the undo in
undo-row = #{ $seq } undo of { $code }
undo-done = Undone: { $code } (kept on this device; the site applies it)
undo-failed = Undo failed: { $error }
undo-nothing = Nothing to undo: undo works on this session's last scan within { $seconds } s.
rescan-no-epc = the item names no EPC
rescan-no-session = open a { $mode } session to re-scan
rescan-row = #{ $seq } { $epc } re-scanned

## The queue screen's rows

queue-open = open { $mode } { $context } · { $operator }
queue-undo = undo { $target }
# A queue row's command, by its wire name (the core's src/wire.rs).
command-open_session = Open session
command-scan = Scan
command-undo = Undo
command-void = Void
command-close_session = Close session
command-acknowledge = Acknowledgement
queue-age = captured { $age } ago
queue-discard = Discard
queue-rescan = Re-scan
queue-state = { $state ->
    [queued] queued
    [sending] sending
    [done] done
    [rejected] rejected
    [blocked] blocked
    [voided] voided
    [training] training
   *[other] { $state }
  }
queue-acknowledged = { $words } (acknowledged)
queue-more-count = More ({ $count } more)
queue-filter-decide-count = To decide ({ $count })
queue-nothing-to-decide = Nothing waits for a decision.
queue-empty = The queue is empty.
queue-counts = queued { $queued } · sending { $sending } · done { $done } · rejected { $rejected } · blocked { $blocked } · voided { $voided }
queue-nothing-waiting = Nothing waiting.
queue-oldest = Oldest waiting: { $age }
queue-sending-now = Sending now.
queue-next-try = Next try at { DATETIME($at, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23") } (in { $in }), or as soon as the site answers again.
queue-action-done = { $action }: done ({ $label })
queue-action-failed = { $label }: { $error }
queue-sent = sent { $items } in { $requests } request(s)
queue-export = Export
queue-export-save = Save file
queue-export-share = Share
queue-export-writing = Writing the file…
queue-export-failed = Export failed: { $error }
queue-export-share-failed = Share failed: { $error }
queue-export-nothing = Nothing to export: every scan on this device has reached the site.
queue-export-done = { $items ->
    [one] { $items } item
   *[other] { $items } items
  } in { $name } ({ $size }). They stay queued here and still go to the site if it answers again.

## Device setup: what the check found

setup-not-url = { $url } is not a URL: it starts https:// and names the site's host and port.
setup-not-web = { $url } is not a web address: it starts https://.
setup-mixed = { $url } is plain http: this page is https and may not reach it. Use the site's https:// address.
setup-port-hint = The site's HTTPS port is { $port } unless it was set otherwise: try https://{ $host }:{ $port }.
setup-plain-port = Port { $port } of { $host } answers plain HTTP, not HTTPS: it is the site's plain port. Use the site's HTTPS address (https://{ $host }:{ $https } unless it was set otherwise).
setup-certificate = This handheld does not trust the certificate of { $origin }, or port { $port } is not the site's HTTPS port. If the port is right, install the site's CA once: open { $trust } (or ask IT to push it), then Save again.
setup-unreachable = The site does not answer at { $origin }: nothing took the connection on port { $port }. Check the address and port, that the site is running, and that this handheld is on its network.
setup-cross-origin = { $origin } answers, but this page (from { $page }) may not read it: open the setup link on the site itself.
setup-token = The site refused the device token (401): it is mistyped, or device { $device } was revoked or given a new token since. Ask a supervisor for a new setup link ({ $command }) and open it.
setup-site-status = The site answered { $status } to the token check.
setup-other-device = That token is device { $named }'s, not { $device }'s: use the id the site printed with it.
setup-checking = Checking { $url }…
setup-not-switched = Not switched: this handheld stays { $device } → { $site }.
setup-done = Set up as { $device } → { $site }
setup-done-but = Set up as { $device } → { $site }. { $why }
setup-not-yet = Not set up yet: scans are kept on this device until it is.

## A new release of the app

release-schema-newer = Capture stopped: this handheld holds scans from a newer release than the site serves now. Nothing queued is lost. Ask the site to serve the newer release again.
release-stopped = Capture stopped: the app did not start ({ $code }: { $message }). Nothing queued is lost.
release-ready = Update ready: build { $build }. Reload between scans.
release-failed = Update { $build } did not install ({ $code }); this handheld stays on build { $running }.
release-updating = Updating the app between scans…

## Labels printed and encoded at the station's printer

printer-paper-out = paper out
printer-head-open = head open
printer-ribbon-out = ribbon out
printer-paused = paused
printer-offline = printer { $printer } is offline
printer-unreached = the site could not reach printer { $printer } at its last visit
printer-faults = printer { $printer }: { $faults }
label-waiting = Label: asked of the station's printer once the site has this scan
label-waits = Label waits: { $trouble }. It prints once, when the printer is back; no ENCODE until the tag reads back.
label-queued = Label queued at { $printer }.
label-printing = Printing and encoding at { $printer }…
label-printed = Tag written and read back at { $printer }: ENCODE recorded.
label-void = Void tag at { $printer }: nothing read back, so no ENCODE. Set the label aside: a supervisor decides on the site's view (reprint or dismiss).
label-read-wrong = Tag read back wrong at { $printer }: wrote { $wrote }, read { $read }; no ENCODE. Set the label aside: a supervisor decides on the site's view (reprint or dismiss).
label-read-other = Tag read back wrong at { $printer }: wrote { $wrote }, read something else; no ENCODE. Set the label aside: a supervisor decides on the site's view (reprint or dismiss).
label-in-doubt = { $printer } did not answer for this label: it may have printed, and no ENCODE is recorded. A supervisor decides on the site's view (reprint or dismiss).
label-dismissed = Label dismissed on the site's view: no ENCODE recorded.
label-state = Label at { $printer }: { $state }.
station-unread = Station printer: not read yet (the site has not answered).
station-none = No printer is set for this station: this handheld writes the tags itself.
station-trouble = Labels print and encode at { $printer }, but { $trouble }: labels wait there and print once it is back.
station-ready = Labels print and encode at { $printer }: each tag is read back before its ENCODE is recorded.

## The ledger's values the screens show, each the site's code in words:
## a unit's state, a GRN's state and QC, a manifest's state, a count's
## state (the codes of site/src/ledger/). A code without a message here
## is shown as itself.

unit-state-new = new
unit-state-in_stock = in stock
unit-state-dispatched = dispatched
unit-state-missing = missing

grn-state-open = open
grn-state-needs_resolution = needs resolution
grn-state-complete = complete

grn-qc-accepted = accepted
grn-qc-held = held
grn-qc-rejected = rejected

manifest-state-draft = draft
manifest-state-packing = packing
manifest-state-dispatched = dispatched
manifest-state-verified = verified

count-state-open = open
count-state-closed = closed
count-state-approved = approved
count-state-cancelled = cancelled
