# The site's view (site/src/view/page): every word it shows, in English.
# The reference locale: the others hold the same messages and attributes.
# Values a message holds ($device, $bin, $epc…) are codes: they are shown as
# they are, isolated left to right in a right-to-left language.

## The page

page-title = Stockhop · site
page-heading = Stockhop site
figure-queue-depth = Queue depth
figure-sync-latency = Median sync latency
commands-link = Command barcodes
language-label = Language
sign-out = Sign out
updated = updated { $time } ({ $zone })
not-updated = not updated: { $error }
never = never
action-failed = Failed: { $error }

## Trend of the site's queue

trend-draining = Draining normally
trend-growing = Growing
trend-escalated = Escalated
trend-none = No status yet

## Times and durations

# A moment on another day: its day and month, then its time.
stamp-day-time = { $day } { $time }
age-minutes = { $minutes } min
age-hours = { $hours } h { $minutes } min
latency-ms = { $ms } ms
latency-seconds = { $seconds } s
latency-minutes = { $minutes } min { $seconds } s

## Sign-in

sign-in-heading = Sign in
sign-in-token = Admin token, from
sign-in-button = Sign in
sign-in-refused = That is not an admin token.

## Banners

alerts-region =
    .aria-label = Offline devices
storage-full = The site is out of storage: handhelds keep their scans and resend them once space is freed
device-offline-since = { $device } ({ $form }) offline since { $time }
printer-fault = { $printer } (printer) { $fault }
# A device that keeps producing rejections (the site's DeviceRejecting
# alert): the label, then its id, then these figures; $count is its
# rejections in the last $minutes minutes, $rate of them a minute.
rejecting-label = Device with many rejections
rejecting-count =
    { $count ->
        [one] { $count } rejection in the last { $minutes } min, { $rate } a minute
       *[other] { $count } rejections in the last { $minutes } min, { $rate } a minute
    }
# $reason is a reason's own words (a reason- message).
rejecting-reason = mostly: { $reason }
rejecting-no-reason = no reason given
rejecting-latest = latest { $time }

## Device profiles, as the banners name them

form-fxr90 = fixed gate
form-mc3390xr = handheld
form-rfd40 = sled
form-zt411r = printer

## Company view (a central's sites)

sites-heading = Sites
sites-all = ← All sites
site-own-view = Open the site's own view
fact-last-contact = Last contact
fact-status = Status
fact-status-not-sent = not sent yet (the site runs an older release)
fact-none = none
fact-queue-depth = Queue depth
fact-oldest-item = Oldest item
fact-oldest-since = { $age } (since { $time })
fact-none-waiting = none waiting
fact-devices-offline = Devices offline
fact-outbox = Outbox
fact-outbox-sent = sent
fact-outbox-waiting = { $count } waiting, { $lag } behind
fact-status-taken = Status taken
fact-hops-received = Hops received
fact-restored = Restored from a backup
fact-restored-at = { $time } (epoch { $epoch }, its hops go on after #{ $after })
fact-first-contact = First contact
contact-silent = silent for { $age } ({ $time })
contact-ago = { $age } ago ({ $time })

## Chart

chart-heading = Offline queue depth and sync latency · 12h
chart-queue-depth = queue depth
chart-sync-latency = median sync latency
chart-sync-latency-axis = median sync latency (s)
chart-site-time = site time ({ $zone })
chart-image =
    .alt = Site queue depth and median sync latency per 5 minutes over the last 12 hours

## Devices

devices-heading = Devices
devices-device = Device
devices-profile = Profile
devices-online = Online
devices-last-seen = Last seen
devices-depth = Depth
devices-oldest = Oldest
devices-session = Session
devices-revoke = Revoke
device-online = online
device-offline = offline ({ $alert })
device-not-heard = not heard from yet
# A device in training: its scans land as simulation.
device-simulation = (sim)
# Beside the id of a device rejecting now, in the list of devices.
device-rejecting = many rejections
commission = Commission
commission-confirm = Post { $device }'s scans for real?
revoke = Revoke
revoke-confirm = Revoke { $device }?
close-session = Close session
close-session-confirm = Close { $device }'s session?
session-open = { $operator } · { $mode }
session-since = { $operator } · { $mode } since { $time }

## Scan modes

mode-receive = receive
mode-put-away = put away
mode-cycle-count = cycle count
mode-dispatch-verify = dispatch verify
mode-find-unit = find unit

## Adding a device

enroll-summary = Add a device
enroll-device-id = Device id
enroll-profile = Profile
profile-option-mc3390xr = mc3390xr (handheld)
profile-option-rfd40 = rfd40 (sled)
profile-option-fxr90 = fxr90 (fixed gate)
profile-option-zt411r = zt411r (printer)
enroll-commissioned = Commissioned (posts for real)
enroll-add = Add
enroll-qr =
    .alt = Setup link as a QR code
enroll-scan = Scan with the handheld into its setup field:

## Rescued queues

rescues-heading = Rescued queues
stranded-none = No revoked device left scans behind.
stranded-device = Revoked device
stranded-revoked = Revoked
stranded-queued = Queued then
stranded-file = Rescue file
stranded-imported = imported { $time }
stranded-not-imported = not imported: import its file ({ $command })
rescues-device = Device
rescues-imported = Imported
rescues-applied = Applied
rescues-replayed = Already at the site
rescues-refused = Refused

## Printers

printers-heading = Printers
printers-printer = Printer
printers-address = Address
printers-status = Status
printers-last-status = Last status
printers-jobs = Jobs waiting
printer-ready = ready
printer-not-answering = not answering: { $error }
fault-paper-out = paper out
fault-head-open = head open
fault-ribbon-out = ribbon out
fault-paused = paused
printer-summary = Add a printer
printer-id = Printer id
printer-address = Address
printer-profile = Profile
printer-option-zt411r = zt411r (RFID label printer)
printer-stations = Stations: handhelds that receive with encode here
printer-add = Add

## Builds

builds-heading = Builds
builds-served = Served
builds-schema = schema
build-devices =
    { $count ->
        [one] { $count } device
       *[other] { $count } devices
    }
build-served = served
build-old = old build
builds-none = No handheld has reported a build.
device-old-build = old build { $build }
device-build = build { $build }
device-not-capturing = not capturing: { $problem }
device-capturing = capturing
builds-all-served = Every handheld runs the served build.

## Terminals and the listener

terminals-heading = Terminals
terminals-none = No terminal has reported.
terminal-seen = seen { $time }
backfill-form =
    .aria-label = Ask a terminal for its records again
backfill-intro = Ask an iclock terminal for its records again (after an outage), times in this browser's zone:
backfill-serial = Serial
backfill-from = From
backfill-to = To
backfill-button = Backfill
backfill-commands =
    .aria-label = The terminal's commands
backfill-queued = Command #{ $command } waits for { $serial }'s next poll.
backfill-return = return { $code }
listener-heading = Listener
listener-queue = Queue
listener-set-aside = set aside
listener-dead-letters = dead letters
listener-set-aside-list =
    .aria-label = Terminal records set aside
set-aside-attempts =
    { $attempts ->
        [one] { $attempts } attempt, last { $time }: { $error }
       *[other] { $attempts } attempts, last { $time }: { $error }
    }
set-aside-next = next try { $time }
set-aside-none = Nothing set aside.
dead-letters-none = No dead letters.

## Central

central-heading = Central
outbox-forwarding = Forwarding as
outbox-to = to
outbox-outbox = outbox
outbox-oldest = oldest
outbox-dead-letters = dead letters
outbox-off = (forwarding off)
outbox-failed = Last delivery failed { $age } ago: { $error }
central-site = Site
central-first-seen = First seen
central-last-seen = Last seen
central-hops = Hops received
central-last-seq = Last seq

## Decisions

decisions-heading = Decisions
decisions-counts = Count variances to approve
decisions-grns = GRNs to resolve
decisions-corrections = Corrections
decisions-print-jobs = Print jobs
decisions-log = Decision log
counts-none = No count variance waits.
grns-none = No GRN waits.
corrections-none = Nothing to correct.
corrections-count = ({ $count })
corrections-more = ({ $shown } shown, the newest; { $more } more refused items wait)
kind-count-variance = Count variance
kind-grn-resolution = GRN to resolve
kind-rejected-item = Refused on the handheld
kind-late-undo = Undo not made
kind-late-undo-expired = undo past { $seconds } s
kind-late-undo-refused = undo the handheld cannot make
kind-terminal-failed = Terminal record refused
context-device = device { $device }
context-operator = operator { $operator }
context-epc = EPC { $epc }
context-bin = bin { $bin }
context-grn = GRN { $grn }
context-manifest = manifest { $manifest }
context-count = count { $count }
context-captured = captured { $time }
context-recorded = recorded { $time }
variance-missing = Missing:
variance-unexpected = Unexpected:
grn-line = { $sku }: { $received } of { $expected } received
grn-line-short = , short { $units }
grn-line-over = , over { $units }
grn-line-tags = { " · " }tags { $tags }
grn-line-no-tags = { " · " }no tags
decision-note = Note for { $decision }
    .placeholder = Note (why)
why = Why: { $words }
choice = { $action }: { $words }

## A decision's own words (the workbench's summary_id, reason_words_id,
## dismiss_id and correct_id, with its args: $mode and $kind arrive as
## words of this catalogue, counts as numbers)

decision-count = Count { $count } of { $location } / { $zone }: { $missing } missing, { $unexpected } unexpected
decision-count-bin = Count { $count } of bin { $bin } in { $location } / { $zone }: { $missing } missing, { $unexpected } unexpected
decision-count-matches = the count found every expected unit and nothing else
decision-count-differs = the count differs from the stock the site expected in the zone
decision-count-dismiss = the stock stays as it stands: the count stays unapproved and posts nothing.
decision-count-correct = { $missing ->
        [one] one missing unit becomes missing
       *[other] { $missing } missing units become missing
    }, { $unexpected ->
        [one] one unexpected unit moves
       *[other] { $unexpected } unexpected units move
    } into the bin they were counted in (ADJUST hops).
decision-grn = GRN { $grn }: { $short } short, { $excess } over, on { $lines ->
        [one] one line
       *[other] { $lines } lines
    }
decision-grn-why = the GRN was closed with lines that did not receive what they expect
decision-grn-dismiss = the GRN is complete as received: each short or over line is booked as an ADJUST hop with its SKU and quantity.
decision-late-undo = Undo #{ $seq } of { $unit } ({ $mode }) on { $device } could not be made.
decision-late-undo-dismiss = the scan stands as recorded.
decision-late-undo-receive = the receive is reversed: { $unit } leaves its GRN line.
decision-late-undo-dispatch = the dispatch is reversed: { $unit } is back in its bin and unverified on the manifest.
decision-late-undo-count = the count scan is reversed: { $unit } is no longer counted.
decision-late-undo-put-away = the put-away is reversed: { $unit } goes back where it was.
decision-item = { $command ->
        [scan] Scan
        [undo] Undo
       *[other] { $command }
    } #{ $seq } ({ $unit }, { $mode }) on { $device } was refused.
decision-item-dismiss = the refusal stands and nothing is posted.
decision-item-correct = { $unit } is in stock in bin { $bin } (an ADJUST hop).
decision-terminal = { $kind } record of { $subject } from terminal { $terminal } was refused by the ledger (HTTP { $status })
decision-terminal-unanswered = { $kind } record of { $subject } from terminal { $terminal } was refused by the ledger (no answer)
decision-terminal-why = the ledger refused it for good (HTTP { $status }): { $answer }
decision-terminal-why-unanswered = the ledger refused it for good (no answer): { $answer }
decision-terminal-dismiss = the record stays refused.
decision-terminal-correct = the record goes to the ledger again (once what refused it is fixed, e.g. the terminal commissioned).

## A terminal's records and sources, as the listener names them

record-kind-attendance = attendance
record-kind-tag-read = tag read
record-kind-code-read = code read
terminal-source-iclock = time clock (iclock)
terminal-source-zebra = RFID reader (Zebra)
terminal-source-framed = reader (framed)
confirm-action = { $action }?
correct = Correct
dismiss = Dismiss
correct-count-variance = Approve variance
correct-grn-resolution = Book the lines
correct-late-undo = Reverse the scan
correct-rejected-item = Confirm the scan
correct-terminal-failed = Send again
dismiss-grn-resolution = Accept as received
settled-dismiss = Dismissed
settled-correct = Corrected
settled-acknowledge = Acknowledged on the handheld
settled-rescan = Re-scanned on the handheld
settled-by = by { $admin } at { $time }
settled-note = “{ $note }”
settled-no-note = no note
settled-hops = hops { $hops }
settled-no-hops = no hops
settled-none = Nothing settled yet.

## Print jobs

print-read-back-mismatch = tag read back wrong
print-void-tag = tag void
print-no-answer = no answer from the printer
print-interrupted = interrupted while sending
print-job = { $label } { $subject } at { $printer }
print-read = read { $tag }
reprint = Reprint
reprint-confirm = Confirm reprint
dismiss-confirm = Confirm dismiss
print-jobs-none = No print job waits.

## Why the ledger refused an item (stockhop::reason::ALL and the codes that
## block an item): its words, and the next step as .next.

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
