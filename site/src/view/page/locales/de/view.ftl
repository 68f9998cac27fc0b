# Die Standortansicht (site/src/view/page) auf Deutsch. Begriffe: GLOSSARY.md.
# Werte in Nachrichten ($device, $bin, $epc …) sind Codes und bleiben unverändert.

## Die Seite

page-title = Stockhop · Standort
page-heading = Stockhop Standort
figure-queue-depth = Warteschlange
figure-sync-latency = Median Sync-Latenz
commands-link = Befehlsbarcodes
language-label = Sprache
sign-out = Abmelden
updated = aktualisiert { $time } ({ $zone })
not-updated = nicht aktualisiert: { $error }
never = nie
action-failed = Fehlgeschlagen: { $error }

## Entwicklung der Warteschlange

trend-draining = Baut sich normal ab
trend-growing = Wächst
trend-escalated = Eskaliert
trend-none = Noch kein Status

## Zeiten und Dauern

stamp-day-time = { $day } { $time }
age-minutes = { $minutes } Min.
age-hours = { $hours } Std. { $minutes } Min.
latency-ms = { $ms } ms
latency-seconds = { $seconds } s
latency-minutes = { $minutes } Min. { $seconds } s

## Anmeldung

sign-in-heading = Anmelden
sign-in-token = Admin-Token, erzeugt mit
sign-in-button = Anmelden
sign-in-refused = Das ist kein Admin-Token.

## Meldungen

alerts-region =
    .aria-label = Geräte offline
storage-full = Der Speicher des Standorts ist voll: Die Geräte behalten ihre Scans und senden sie erneut, sobald wieder Platz ist
device-offline-since = { $device } ({ $form }) offline seit { $time }
printer-fault = { $printer } (Drucker): { $fault }
rejecting-label = Gerät mit vielen Ablehnungen
rejecting-count =
    { $count ->
        [one] { $count } Ablehnung in den letzten { $minutes } Min., { $rate } pro Minute
       *[other] { $count } Ablehnungen in den letzten { $minutes } Min., { $rate } pro Minute
    }
rejecting-reason = meist: { $reason }
rejecting-no-reason = ohne Grundangabe
rejecting-latest = zuletzt { $time }

## Geräteprofile

form-fxr90 = festes Gate
form-mc3390xr = Handscanner
form-rfd40 = Sled
form-zt411r = Drucker

## Unternehmensansicht (die Standorte einer Zentrale)

sites-heading = Standorte
sites-all = ← Alle Standorte
site-own-view = Eigene Ansicht des Standorts öffnen
fact-last-contact = Letzter Kontakt
fact-status = Status
fact-status-not-sent = noch nicht gesendet (der Standort läuft mit einer älteren Version)
fact-none = keine
fact-queue-depth = Warteschlange
fact-oldest-item = Ältester Eintrag
fact-oldest-since = { $age } (seit { $time })
fact-none-waiting = nichts wartet
fact-devices-offline = Geräte offline
fact-outbox = Postausgang
fact-outbox-sent = gesendet
fact-outbox-waiting = { $count } wartend, { $lag } im Rückstand
fact-status-taken = Status erfasst
fact-hops-received = Empfangene Buchungen
fact-restored = Aus einer Sicherung wiederhergestellt
fact-restored-at = { $time } (Epoche { $epoch }, Buchungen gehen nach #{ $after } weiter)
fact-first-contact = Erster Kontakt
contact-silent = seit { $age } still ({ $time })
contact-ago = vor { $age } ({ $time })

## Diagramm

chart-heading = Offline-Warteschlange und Sync-Latenz · 12 Std.
chart-queue-depth = Warteschlange
chart-sync-latency = Median Sync-Latenz
chart-sync-latency-axis = Median Sync-Latenz (s)
chart-site-time = Standortzeit ({ $zone })
chart-image =
    .alt = Warteschlange des Standorts und Median der Sync-Latenz je 5 Minuten über die letzten 12 Stunden

## Geräte

devices-heading = Geräte
devices-device = Gerät
devices-profile = Profil
devices-online = Online
devices-last-seen = Zuletzt gesehen
devices-depth = Warteschl.
devices-oldest = Ältester
devices-session = Sitzung
devices-revoke = Sperren
device-online = online
device-offline = offline ({ $alert })
device-not-heard = noch nicht gemeldet
device-simulation = (Schulung)
device-rejecting = viele Ablehnungen
commission = In Betrieb nehmen
commission-confirm = Scans von { $device } ab jetzt echt buchen?
revoke = Sperren
revoke-confirm = { $device } sperren?
close-session = Sitzung schließen
close-session-confirm = Sitzung von { $device } schließen?
session-open = { $operator } · { $mode }
session-since = { $operator } · { $mode } seit { $time }

## Modi

mode-receive = Wareneingang
mode-put-away = Einlagerung
mode-cycle-count = Inventur
mode-dispatch-verify = Versandprüfung
mode-find-unit = Einheit suchen

## Gerät hinzufügen

enroll-summary = Gerät hinzufügen
enroll-device-id = Geräte-ID
enroll-profile = Profil
profile-option-mc3390xr = mc3390xr (Handscanner)
profile-option-rfd40 = rfd40 (Sled)
profile-option-fxr90 = fxr90 (festes Gate)
profile-option-zt411r = zt411r (Drucker)
enroll-commissioned = In Betrieb (bucht echt)
enroll-add = Hinzufügen
enroll-qr =
    .alt = Einrichtungslink als QR-Code
enroll-scan = Mit dem Handscanner in sein Einrichtungsfeld scannen:

## Gerettete Warteschlangen

rescues-heading = Gerettete Warteschlangen
stranded-none = Kein gesperrtes Gerät hat Scans zurückgelassen.
stranded-device = Gesperrtes Gerät
stranded-revoked = Gesperrt
stranded-queued = Damals wartend
stranded-file = Rettungsdatei
stranded-imported = importiert { $time }
stranded-not-imported = nicht importiert: Datei importieren ({ $command })
rescues-device = Gerät
rescues-imported = Importiert
rescues-applied = Gebucht
rescues-replayed = Schon am Standort
rescues-refused = Abgelehnt

## Drucker

printers-heading = Drucker
printers-printer = Drucker
printers-address = Adresse
printers-status = Status
printers-last-status = Letzter Status
printers-jobs = Wartende Aufträge
printer-ready = bereit
printer-not-answering = antwortet nicht: { $error }
fault-paper-out = Papier leer
fault-head-open = Druckkopf offen
fault-ribbon-out = Farbband leer
fault-paused = angehalten
printer-summary = Drucker hinzufügen
printer-id = Drucker-ID
printer-address = Adresse
printer-profile = Profil
printer-option-zt411r = zt411r (RFID-Etikettendrucker)
printer-stations = Stationen: Geräte, die hier mit Codierung vereinnahmen
printer-add = Hinzufügen

## Versionen

builds-heading = Versionen
builds-served = Ausgeliefert
builds-schema = Schema
build-devices =
    { $count ->
        [one] { $count } Gerät
       *[other] { $count } Geräte
    }
build-served = ausgeliefert
build-old = alte Version
builds-none = Noch kein Gerät hat eine Version gemeldet.
device-old-build = alte Version { $build }
device-build = Version { $build }
device-not-capturing = erfasst nicht: { $problem }
device-capturing = erfasst
builds-all-served = Alle Geräte laufen mit der ausgelieferten Version.

## Terminals und Listener

terminals-heading = Terminals
terminals-none = Noch kein Terminal hat sich gemeldet.
terminal-seen = gesehen { $time }
backfill-form =
    .aria-label = Ein Terminal erneut nach seinen Datensätzen fragen
backfill-intro = Ein iclock-Terminal erneut nach seinen Datensätzen fragen (nach einem Ausfall), Zeiten in der Zeitzone dieses Browsers:
backfill-serial = Seriennummer
backfill-from = Von
backfill-to = Bis
backfill-button = Nachladen
backfill-commands =
    .aria-label = Die Befehle des Terminals
backfill-queued = Befehl #{ $command } wartet auf die nächste Abfrage von { $serial }.
backfill-return = Rückgabe { $code }
listener-heading = Listener
listener-queue = Warteschlange
listener-set-aside = zurückgestellt
listener-dead-letters = unzustellbar
listener-set-aside-list =
    .aria-label = Zurückgestellte Terminal-Datensätze
set-aside-attempts =
    { $attempts ->
        [one] { $attempts } Versuch, zuletzt { $time }: { $error }
       *[other] { $attempts } Versuche, zuletzt { $time }: { $error }
    }
set-aside-next = nächster Versuch { $time }
set-aside-none = Nichts zurückgestellt.
dead-letters-none = Nichts Unzustellbares.

## Zentrale

central-heading = Zentrale
outbox-forwarding = Weiterleitung als
outbox-to = an
outbox-outbox = Postausgang
outbox-oldest = ältester
outbox-dead-letters = unzustellbar
outbox-off = (Weiterleitung aus)
outbox-failed = Letzte Zustellung vor { $age } fehlgeschlagen: { $error }
central-site = Standort
central-first-seen = Zuerst gesehen
central-last-seen = Zuletzt gesehen
central-hops = Empfangene Buchungen
central-last-seq = Letzte Nr.

## Entscheidungen

decisions-heading = Entscheidungen
decisions-counts = Inventurdifferenzen zur Freigabe
decisions-grns = Offene WE-Belege
decisions-corrections = Korrekturen
decisions-print-jobs = Druckaufträge
decisions-log = Entscheidungsprotokoll
counts-none = Keine Inventurdifferenz wartet.
grns-none = Kein WE-Beleg wartet.
corrections-none = Nichts zu korrigieren.
corrections-count = ({ $count })
corrections-more = ({ $shown } angezeigt, die neuesten; { $more } weitere abgelehnte Scans warten)
kind-count-variance = Inventurdifferenz
kind-grn-resolution = WE-Beleg zu klären
kind-rejected-item = Am Gerät abgelehnt
kind-late-undo = Stornierung nicht ausgeführt
kind-late-undo-expired = Stornierung nach mehr als { $seconds } s
kind-late-undo-refused = Stornierung, die das Gerät nicht ausführen kann
kind-terminal-failed = Terminal-Datensatz abgelehnt
context-device = Gerät { $device }
context-operator = Mitarbeiter { $operator }
context-epc = EPC { $epc }
context-bin = Lagerplatz { $bin }
context-grn = WE-Beleg { $grn }
context-manifest = Ladeliste { $manifest }
context-count = Zählauftrag { $count }
context-captured = erfasst { $time }
context-recorded = gebucht { $time }
variance-missing = Fehlend:
variance-unexpected = Unerwartet:
grn-line = { $sku }: { $received } von { $expected } vereinnahmt
grn-line-short = , { $units } zu wenig
grn-line-over = , { $units } zu viel
grn-line-tags = { " · " }Tags { $tags }
grn-line-no-tags = { " · " }keine Tags
decision-note = Notiz zu { $decision }
    .placeholder = Notiz (Begründung)
why = Grund: { $words }
choice = { $action }: { $words }

## Die Worte einer Entscheidung (summary_id, reason_words_id, dismiss_id
## und correct_id der Werkbank, mit ihren args)

decision-count = Zählauftrag { $count } in { $location } / { $zone }: { $missing } fehlend, { $unexpected } unerwartet
decision-count-bin = Zählauftrag { $count } für Lagerplatz { $bin } in { $location } / { $zone }: { $missing } fehlend, { $unexpected } unerwartet
decision-count-matches = die Inventur hat jede erwartete Einheit gefunden und nichts sonst
decision-count-differs = die Inventur weicht vom Bestand ab, den der Standort in der Zone erwartet
decision-count-dismiss = der Bestand bleibt, wie er ist: der Zählauftrag bleibt unfreigegeben und bucht nichts.
decision-count-correct = { $missing ->
        [one] eine fehlende Einheit wird als fehlend gebucht
       *[other] { $missing } fehlende Einheiten werden als fehlend gebucht
    }, { $unexpected ->
        [one] eine unerwartete Einheit kommt auf den Lagerplatz, auf dem sie gezählt wurde
       *[other] { $unexpected } unerwartete Einheiten kommen auf den Lagerplatz, auf dem sie gezählt wurden
    } (ADJUST-Buchungen).
decision-grn = WE-Beleg { $grn }: { $short } zu wenig, { $excess } zu viel, in { $lines ->
        [one] einer Position
       *[other] { $lines } Positionen
    }
decision-grn-why = der WE-Beleg wurde mit Positionen abgeschlossen, die nicht die erwartete Menge erhalten haben
decision-grn-dismiss = der WE-Beleg gilt wie vereinnahmt als vollständig: jede Position mit Unter- oder Überlieferung wird als ADJUST-Buchung mit Artikel und Menge gebucht.
decision-late-undo = Stornierung Nr. { $seq } für { $unit } ({ $mode }) auf { $device } war nicht möglich.
decision-late-undo-dismiss = der Scan bleibt, wie er gebucht wurde.
decision-late-undo-receive = der Wareneingang wird storniert: { $unit } verlässt seine WE-Position.
decision-late-undo-dispatch = der Versand wird storniert: { $unit } ist wieder auf seinem Lagerplatz und auf der Ladeliste ungeprüft.
decision-late-undo-count = der Inventurscan wird storniert: { $unit } ist nicht mehr gezählt.
decision-late-undo-put-away = die Einlagerung wird storniert: { $unit } kommt zurück, wo es war.
decision-item = { $command ->
        [scan] Scan
        [undo] Stornierung
       *[other] { $command }
    } Nr. { $seq } ({ $unit }, { $mode }) auf { $device } wurde abgelehnt.
decision-item-dismiss = die Ablehnung bleibt bestehen, nichts wird gebucht.
decision-item-correct = { $unit } ist auf Lager, auf Lagerplatz { $bin } (eine ADJUST-Buchung).
decision-terminal = Datensatz ({ $kind }) zu { $subject } vom Terminal { $terminal } wurde vom Bestandsbuch abgelehnt (HTTP { $status })
decision-terminal-unanswered = Datensatz ({ $kind }) zu { $subject } vom Terminal { $terminal } wurde vom Bestandsbuch abgelehnt (keine Antwort)
decision-terminal-why = das Bestandsbuch hat ihn endgültig abgelehnt (HTTP { $status }): { $answer }
decision-terminal-why-unanswered = das Bestandsbuch hat ihn endgültig abgelehnt (keine Antwort): { $answer }
decision-terminal-dismiss = der Datensatz bleibt abgelehnt.
decision-terminal-correct = der Datensatz geht noch einmal an das Bestandsbuch (sobald behoben ist, was ihn abgelehnt hat, z. B. das Terminal in Betrieb genommen).

## Datensätze und Quellen eines Terminals

record-kind-attendance = Zeiterfassung
record-kind-tag-read = Tag-Lesung
record-kind-code-read = Code-Lesung
terminal-source-iclock = Zeiterfassungsterminal (iclock)
terminal-source-zebra = RFID-Leser (Zebra)
terminal-source-framed = Leser (framed)
confirm-action = { $action }?
correct = Korrigieren
dismiss = Verwerfen
correct-count-variance = Differenz freigeben
correct-grn-resolution = Positionen buchen
correct-late-undo = Scan stornieren
correct-rejected-item = Scan bestätigen
correct-terminal-failed = Erneut senden
dismiss-grn-resolution = Wie vereinnahmt übernehmen
settled-dismiss = Verworfen
settled-correct = Korrigiert
settled-acknowledge = Am Gerät bestätigt
settled-rescan = Am Gerät erneut gescannt
settled-by = von { $admin } um { $time }
settled-note = „{ $note }“
settled-no-note = keine Notiz
settled-hops = Buchungen { $hops }
settled-no-hops = keine Buchungen
settled-none = Noch nichts entschieden.

## Druckaufträge

print-read-back-mismatch = Tag falsch zurückgelesen
print-void-tag = Tag ungültig
print-no-answer = keine Antwort vom Drucker
print-interrupted = beim Senden unterbrochen
print-job = { $label } { $subject } an { $printer }
print-read = gelesen { $tag }
reprint = Neu drucken
reprint-confirm = Neudruck bestätigen
dismiss-confirm = Verwerfen bestätigen
print-jobs-none = Kein Druckauftrag wartet.

## Warum der Standort einen Scan abgelehnt hat: Worte und nächster Schritt (.next).

reason-stale_state = Die Einheit wurde am Standort geändert, nachdem dieses Gerät sie zuletzt gelesen hat.
    .next = Erneut scannen (das Gerät liest die Einheit zuerst neu) oder bestätigen.
reason-session_not_open = Die Sitzung dieses Scans wurde am Standort nie geöffnet.
    .next = Sehen Sie sich den ersten Eintrag der Sitzung an (warum er abgelehnt wurde) und beginnen Sie dann eine neue Sitzung.
reason-session_already_opened = Diese Sitzung war bereits geöffnet.
    .next = Nichts zu tun; bestätigen.
reason-session_already_closed = Diese Sitzung war bereits geschlossen.
    .next = Nichts zu tun; bestätigen.
reason-session_closed = Die Schichtleitung hat diese Sitzung am Standort geschlossen, bevor dieser Scan erfolgte.
    .next = Scannen Sie Ihren Ausweis, um eine neue Sitzung zu beginnen, und scannen Sie dann erneut.
reason-undo_window_expired = Die Stornierung kam mehr als 2 Minuten nach dem Scan.
    .next = Bitten Sie die Schichtleitung um Korrektur (sie steht auf ihrer Liste).
reason-unknown_target = Der Standort hat den Scan, den diese Stornierung nennt, nie erhalten.
    .next = Bestätigen; prüfen Sie den Scan selbst in der Warteschlange.
reason-cannot_undo_an_undo = Eine Stornierung kann nicht storniert werden.
    .next = Scannen Sie den Artikel erneut, wenn er gelten soll.
reason-target_rejected = Der Scan wurde abgelehnt, es gibt also nichts zu stornieren.
    .next = Bestätigen.
reason-target_not_undoable = Dieser Scan hat nichts geändert, was storniert werden kann.
    .next = Bestätigen; fragen Sie die Schichtleitung, wenn sich etwas ändern muss.
reason-target_not_applied = Der Scan ist noch nicht gebucht.
    .next = Warten Sie, bis er gebucht ist, und stornieren Sie dann erneut.
reason-target_not_rejected = Dieser Eintrag wurde nicht abgelehnt, es gibt also nichts zu bestätigen.
    .next = Nichts zu tun.
reason-unknown_operator = Dieser Ausweis steht nicht auf der Mitarbeiterliste des Standorts.
    .next = Scannen Sie Ihren eigenen Ausweis oder bitten Sie die Schichtleitung, Sie anzulegen.
reason-mode_not_allowed = Dieses Gerät darf das nicht (sein Profil).
    .next = Nutzen Sie ein Gerät, das es darf; fragen Sie die Schichtleitung nach diesem Gerät.
reason-read_only_mode = „Einheit suchen“ ändert am Standort nie etwas.
    .next = Nichts zu tun; bestätigen.
reason-unknown_bin = Der Standort hat keinen Lagerplatz mit diesem Etikett.
    .next = Scannen Sie das Lagerplatzetikett erneut oder bitten Sie die Schichtleitung, den Lagerplatz anzulegen.
reason-unknown_unit = Der Standort kennt diesen Tag bzw. diese Seriennummer nicht.
    .next = Legen Sie die Einheit beiseite und informieren Sie die Schichtleitung.
reason-unit_state = Diese Einheit kann nicht eingelagert werden: Sie ist versendet oder fehlt.
    .next = Legen Sie sie beiseite und informieren Sie die Schichtleitung.
reason-grn_not_accepted = Dieser WE-Beleg ist unbekannt oder von der QS nicht freigegeben.
    .next = Prüfen Sie die WE-Belegnummer; fragen Sie die QS oder die Schichtleitung.
reason-not_on_grn = Der Artikel dieser Einheit steht nicht auf dem WE-Beleg.
    .next = Legen Sie sie beiseite; informieren Sie die Schichtleitung (falscher WE-Beleg oder falsche Lieferung).
reason-excess_line = Die Position des WE-Belegs hat bereits alle erwarteten Einheiten.
    .next = Legen Sie die überzählige Einheit beiseite und informieren Sie die Schichtleitung.
reason-already_received = Diese Einheit wurde bereits vereinnahmt.
    .next = Legen Sie sie beiseite; es kann ein doppelter Tag sein.
reason-count_not_open = Der Zählauftrag ist geschlossen, genehmigt oder storniert.
    .next = Wählen Sie einen offenen Zählauftrag oder bitten Sie die Schichtleitung, einen zu öffnen.
reason-manifest_not_ready = Die Ladeliste ist unbekannt oder weder in Kommissionierung noch versendet.
    .next = Prüfen Sie die Ladelistennummer; fragen Sie die Schichtleitung.
reason-not_on_manifest = Diese Einheit steht nicht auf der Ladeliste.
    .next = Nicht verladen und die Schichtleitung informieren.
