# Die Texte des Handscanners auf Deutsch. Fachbegriffe wie im Lager
# üblich (siehe GLOSSARY.md); Codes, Lagerplätze, EPCs und GS1-Werte
# kommen als Argumente und werden nie übersetzt.

## Statusleiste und Hinweisbanner

bar-waiting = { $count ->
    [one] wartet
   *[other] warten
  }
bar-oldest = älteste { $age }
bar-attention = { $count } zu entscheiden
bar-cache = Daten { $age }
bar-cache-none = Daten –
bar-cache-loading = Daten: { $units } geladen
bar-label = { $figures }. Öffnet die Warteschlange.
bar-label-waiting = { $count } wartend
net-refused = Nicht zugelassen
net-no-site = Kein Standort
net-online = Online
net-offline = Offline
menu-button = Menü
    .aria-label = Menü
worker-starting = startet…
worker-ready = bereit
worker-not-secure = Nicht sicher: Öffnen Sie den Standort über https:// (zuerst der Standort-CA unter /trust.html vertrauen).
worker-no-support = Keine Service-Worker-Unterstützung: Scans können offline nicht gespeichert werden.
banner-refused = Dieses Gerät ist am Standort nicht mehr zugelassen: Bitten Sie die Schichtleitung, es neu einzurichten.
banner-refused-kept = Alle Scans bleiben auf diesem Gerät gespeichert und werden gesendet, sobald es neu eingerichtet ist.
banner-training = SCHULUNG
banner-training-words = Dieses Gerät ist nicht in Betrieb genommen: Der Standort bucht seine Scans als Übung und bewegt keinen Bestand.
late-show = Anzeigen
late-seen = Gesehen
release-reload = Neu laden
reference-loading = Stammdaten werden geladen: bisher { $units } Einheiten
reference-partial = Stammdaten: bisher { $units } Einheiten; der Ladevorgang wird dort fortgesetzt
starting-placeholder = startet: Scans bleiben erhalten
starting-words = Startet: Was jetzt gescannt wird, bleibt erhalten und wird gleich verarbeitet.

## Zeitspannen

ago-seconds = { $n } s
ago-minutes = { $n } min
ago-hours = { $n } h
ago-days = { $n } d
ago-none = –

## Geräteeinrichtung

setup-title = Gerät einrichten
setup-language = Sprache dieses Geräts
setup-language-operator = Solange ein Bediener mit einer anderen Sprache angemeldet ist, spricht das Gerät seine; diese gilt wieder nach der Abmeldung.
setup-hint = Öffnen Sie den Einrichtungslink, den die Standortansicht als QR-Code zeigt, oder geben Sie die drei Werte ein, die { $command } ausgegeben hat.
setup-site-url = Standort-URL
setup-device-id = Geräte-ID
setup-device-token = Geräte-Token
setup-save = Speichern
setup-anyway = Trotzdem speichern: Der Standort ist gerade nicht erreichbar
back = Zurück

## Modusauswahl und Anmeldung

picker-operator = Mitarbeiter
operator-change = Wechseln
operator-signout = Abmelden
picker-choose = Modus wählen
picker-sign-in = Anmelden
picker-scan-badge = Scannen Sie Ihren Mitarbeiterausweis
picker-scan-badge-first = Scannen Sie zuerst Ihren Mitarbeiterausweis
picker-tap-mode = Modus antippen
picker-session-closed = Die Schichtleitung hat diese Sitzung am Standort geschlossen. Danach Gescanntes zählt nicht: Scannen Sie Ihren Ausweis, um neu zu beginnen.
picker-no-profile = Dieses Gerät kennt sein Profil noch nicht: Es liest es vom Standort, sobald es online ist.
picker-no-modes = Profil { $profile } hat keinen Modus für Handscanner.
picker-device = { $device } · { $profile }
picker-summary = { $count ->
    [one] { $mode } geschlossen: { $count } Scan, { $applied } gebucht, { $refused } abgelehnt, { $waiting } noch zu senden. Die Warteschlange listet jeden einzeln.
   *[other] { $mode } geschlossen: { $count } Scans, { $applied } gebucht, { $refused } abgelehnt, { $waiting } noch zu senden. Die Warteschlange listet jeden einzeln.
  }
picker-summary-undone = { $count ->
    [one] { $mode } geschlossen: { $count } Scan, { $applied } gebucht, davon { $undone } storniert, { $refused } abgelehnt, { $waiting } noch zu senden. Die Warteschlange listet jeden einzeln.
   *[other] { $mode } geschlossen: { $count } Scans, { $applied } gebucht, davon { $undone } storniert, { $refused } abgelehnt, { $waiting } noch zu senden. Die Warteschlange listet jeden einzeln.
  }
session-open-failed = Sitzung konnte nicht geöffnet werden: { $error }
sign-in-not-known = { $code } ist kein Mitarbeiterausweis, den der Standort kennt
sign-in-refused = { $why }: nicht angemeldet. Scannen Sie Ihren eigenen Ausweis.
signed-in = Angemeldet: { $operator }
signed-out = { $operator } abgemeldet.
signed-out-idle = Nach { $idle } ohne Scan abgemeldet. Scannen Sie Ihren Ausweis, um weiterzumachen.
operator-label = { $name } ({ $badge })

## Modusbildschirm

mode-needs =
    .aria-label = Was dieser Modus braucht
results-label =
    .aria-label = Letzte Scans
switch-mode = Modus wechseln
close-session = Sitzung schließen
mode-need-missing = fehlt:

## Warteschlange

queue-title = Warteschlange
queue-retry = Jetzt erneut senden
queue-refresh = Aktualisieren
queue-filters =
    .aria-label = Anzeigen
queue-filter-all = Alle
queue-filter-decide = Zu entscheiden
queue-more = Mehr

## Menü

menu-title = Menü
menu-refresh = Stammdaten aktualisieren
menu-commands = Befehls-Barcodes
menu-setup = Geräteeinrichtung
menu-idle = Abmelden nach Leerlauf
menu-counts-legend = Neben dem Scanfeld, seit diese Seite geöffnet ist: ✓ auf diesem Gerät erfasste Scans, ✗ Scans, die es nicht speichern konnte (erneut scannen), ⊘ vor der Erfassung abgewiesene Scans (jede Zeile sagt warum). Was der Standort später ablehnt, steht in der Warteschlange.
menu-signals-on = Ton und Vibration: an
menu-signals-off = Ton und Vibration: aus
menu-idle-minutes = { $n } min
menu-idle-hours = { $n } h
menu-not-set-up = Nicht eingerichtet.
menu-device = { $device } → { $site }
menu-device-profile = { $device } · { $profile } → { $site }
menu-device-encodes = { $device } · { $profile } · codiert → { $site }
menu-reference = Stammdatenkopie: { $units } Einheiten, { $bins } Lagerplätze, { $grns } WE-Belege, { $counts } Zählaufträge; { $age } alt
menu-reference-loading = Stammdatenkopie: { $units } Einheiten, { $bins } Lagerplätze, { $grns } WE-Belege, { $counts } Zählaufträge; { $age } alt (lädt)
menu-reference-never = Stammdatenkopie: { $units } Einheiten, { $bins } Lagerplätze, { $grns } WE-Belege, { $counts } Zählaufträge; nie vollständig
menu-reference-never-loading = Stammdatenkopie: { $units } Einheiten, { $bins } Lagerplätze, { $grns } WE-Belege, { $counts } Zählaufträge; nie vollständig (lädt)
menu-reference-none = Stammdatenkopie: –
menu-reference-read = Stammdaten gelesen.
storage-persist-granted = Dauerhafter Speicher gewährt.
storage-persist-advice = Dauerhafter Speicher NICHT gewährt: Der Browser kann die Daten dieses Geräts löschen, wenn der Platz knapp wird. Fügen Sie Stockhop dem Startbildschirm hinzu (Browsermenü → App installieren oder Zum Startbildschirm hinzufügen) oder erlauben Sie dieser Website in den Website-Einstellungen des Browsers, Daten zu speichern, und öffnen Sie dann dieses Menü erneut. Bis dahin die Warteschlange abarbeiten lassen, bevor der Speicher knapp wird.
storage-unavailable = Speicherschätzung nicht verfügbar.
storage-estimate = Belegt { NUMBER($used, maximumFractionDigits: 1, minimumFractionDigits: 1) } MB von { NUMBER($quota, maximumFractionDigits: 0) } MB

## Scanfeld und Dialoge

dock-scan = Scan
dock-input =
    .placeholder = wartet auf den Scanner
dock-counts =
    .aria-label = Scans seit dem Öffnen dieser Seite (das Menü erklärt es)
dock-captured-title =
    .title = erfasst
dock-captured = {" "}erfasst
dock-failed-title =
    .title = konnte nicht gespeichert werden
dock-failed = {" "}konnte nicht gespeichert werden
dock-refused-title =
    .title = vor der Erfassung abgewiesen
dock-refused = {" "}abgewiesen
alert-ack = Bestätigen
alert-acknowledged = Alarm bestätigt.
no-reply = keine Antwort

## Vor der Erfassung abgewiesene Scans

scan-answer-first = Beantworten Sie zuerst die Frage: { $code } wurde nicht erfasst.
scan-not-captured = { $code } wurde nicht erfasst.
scan-again = Erneut scannen.
scan-no-constants = Nicht erfasst: { $code }. Dieses Gerät hat die Einstellungen des Standorts noch nicht gelesen; verbinden Sie sich wieder mit dem Standort und scannen Sie erneut.
scan-alert-first = Bestätigen Sie zuerst den Alarm: { $code } wurde nicht erfasst.
scan-mode-first = Wählen Sie zuerst einen Modus: { $code } wurde nicht erfasst.
scan-unknown-mode = unbekannter Modus { $mode }
scan-not-captured-why = Nicht erfasst: { $error }
scan-badge-named = Das ist der Ausweis von { $name } ({ $badge }): nicht erfasst.
scan-badge = Das ist der Ausweis von Mitarbeiter { $badge }: nicht erfasst.
scan-prompt-again = { $prompt }.
scan-nothing-to-confirm = Nichts zu bestätigen.
signed-out-close = { $operator } abgemeldet (CLOSE).
signed-out-nobody = Niemand angemeldet.

## Kopf des Modusbildschirms

session-open = Offen: { $operator } · { $session }
session-read-only = { $operator } · nur lesen
session-not-open = Noch nicht geöffnet
scan-bin-units = Lagerplatz { $bin }: Einheiten scannen
scan-bin-first = Scannen Sie zuerst ein Lagerplatzetikett.

## Einheit suchen

mode-find_unit = Einheit suchen
mode-find_unit-blurb = Wo ist sie? Aus den Daten dieses Geräts, auch offline.
find-prompt = Tag, Seriennummer oder Einheitenetikett scannen
find-prompt-small = Antwort aus diesem Gerät
find-not-known = { $code }: unbekannt
find-age = Aus der Kopie dieses Geräts, { $age } alt.
find-no-gs1-unit = { $code }: keine Einheit mit dieser GTIN und Seriennummer in der Kopie dieses Geräts
find-not-in-copy = { $code }: nicht in der Kopie dieses Geräts
find-place = { $bin } · Zone { $zone } · { $location }
find-no-bin-lower = kein Lagerplatz
find-bin = Lagerplatz { $bin }
find-no-bin = Kein Lagerplatz
find-state = Status
find-where = Ort
find-sku = Artikelnr.
find-epc = EPC
find-serial = Seriennummer
find-gtin = GTIN
find-gs1-serial = GS1-Seriennummer
find-lot = Charge
find-expiry = Verfallsdatum
find-result = { $epc }: { $state }, { $bin }

## Rückfragen

setup-switch-title = Zu { $device } an { $site } wechseln?
setup-switch-text = { $count ->
    [one] Dieses Gerät hält { $count } noch nicht abgeschlossenen Scan von { $device } an { $site }. Er bleibt in jedem Fall auf dem Gerät (die Warteschlange zeigt ihn), wird aber ab jetzt unter der neuen Einrichtung gesendet. Lassen Sie ihn zuerst abarbeiten, wenn die Schichtleitung nichts anderes sagt.
   *[other] Dieses Gerät hält { $count } noch nicht abgeschlossene Scans von { $device } an { $site }. Sie bleiben in jedem Fall auf dem Gerät (die Warteschlange zeigt sie), werden aber ab jetzt unter der neuen Einrichtung gesendet. Lassen Sie sie zuerst abarbeiten, wenn die Schichtleitung nichts anderes sagt.
  }
setup-switch-yes = Wechseln
setup-switch-no = Bei { $device } bleiben
setup-switch-how = Tippen Sie auf „{ $no }“ oder scannen Sie CONFIRM, um zu wechseln.
count-close-title = Zählauftrag { $count } schließen?
count-close-text = Damit wird die Inventur für die ganze Zone { $zone } geschlossen; der Standort ermittelt dann die Differenzen.
count-close-text-figures = Damit wird die Inventur für die ganze Zone { $zone } geschlossen; der Standort ermittelt dann die Differenzen. Fehlend { $missing }, unerwartet { $unexpected } (Zahlen des Standorts { $age } alt, plus die Scans dieses Geräts seitdem).
count-close-yes = Inventur schließen
count-close-no = Weiterzählen
count-close-how = Tippen Sie auf „{ $no }“ oder scannen Sie CONFIRM, um die Inventur zu schließen.

## Was ein Code ist, wenn er nicht passt

sign-in-not-badge-kind = { $kind ->
    [tag] { $code } ist ein Tag, kein Mitarbeiterausweis
    [bin] { $code } ist ein Lagerplatzetikett, kein Mitarbeiterausweis
    [grn] { $code } ist ein WE-Beleg, kein Mitarbeiterausweis
    [count] { $code } ist ein Zählauftrag, kein Mitarbeiterausweis
   *[unit] { $code } ist die Seriennummer der Einheit { $epc }, kein Mitarbeiterausweis
  }
put-other-kind = { $kind ->
    [grn] { $code } ist ein WE-Beleg, keine Einheit und kein Lagerplatzetikett: nicht erfasst.
   *[count] { $code } ist ein Zählauftrag, keine Einheit und kein Lagerplatzetikett: nicht erfasst.
  }
put-neither = { $code } ist weder eine Einheit noch ein Lagerplatzetikett, das der Standort kennt: nicht erfasst.
put-still = Der Lagerplatz ist weiterhin { $bin }: Scannen Sie eine Einheit dafür oder ein anderes Lagerplatzetikett.
put-bin-then-units = Scannen Sie das Lagerplatzetikett, dann die Einheiten.
put-prompt-units = Einheiten für Lagerplatz { $bin } scannen
put-prompt-other-bin = oder ein anderes Lagerplatzetikett
put-prompt-wait = Einheiten-Scans warten darauf
prompt-bin = Lagerplatzetikett scannen
bin-need = Lagerplatz { $bin }
bin-need-none = Lagerplatzetikett
bin-first = Scannen Sie zuerst ein Lagerplatzetikett: { $code } wurde nicht erfasst.
mode-put_away = Einlagerung
mode-put_away-blurb = Lagerplatzetikett scannen, dann die Einheiten.

## GS1-Etiketten

label-refused = Nicht erfasst: { $why }.
label-refused-next = Nichts davon wurde verwendet. Scannen Sie es erneut; ein zweimal abgelehntes Etikett ist fehlerhaft gedruckt: Legen Sie den Artikel für ein neues Etikett beiseite.
label-sscc = SSCC { $value }
label-gtin = GTIN { $value }
label-serial = Seriennr. { $value }
label-lot = Charge { $value }
label-expiry = Verfall { $value }
label-what = { $text } ({ $keys })
label-no-unit = { $what }: Keine Einheit hat diese GTIN und Seriennummer, weder in der Kopie dieses Geräts noch am Standort: nicht erfasst.
label-no-unit-next = Scannen Sie stattdessen den Tag der Einheit, oder bitten Sie die Schichtleitung, GTIN und Seriennummer zu importieren.
label-pallet = { $what } ist ein Palettenetikett: { $mode } nimmt das Etikett einer Einheit, nicht erfasst.
label-sku-lot = { $what } bezeichnet Artikel und Charge, nicht eine Einheit: nicht erfasst.
label-sku-lot-next = { $prompt }: das eigene Etikett oder den Tag der Einheit.
label-nothing = { $what } bezeichnet keine Einheit, Palette oder Charge: nicht erfasst.

## Inventur

mode-cycle_count = Inventur
mode-cycle_count-blurb = Eine Zone Lagerplatz für Lagerplatz zählen.
count-need = Zählauftrag { $count }
count-need-none = Zählauftrag
count-prompt-choose = Zählauftrag scannen oder antippen
count-prompt-tags = Tags in Lagerplatz { $bin } scannen
count-prompt-next-bin = oder das nächste Lagerplatzetikett
count-prompt-zone = Zone { $zone }
count-none-open = Kein offener Zählauftrag in der Kopie dieses Geräts: Scannen Sie einen.
count-choice = { $location } · Zone { $zone }
count-unknown = Kein Zählauftrag, den dieses Gerät kennt: { $count }
offline-scan-again = Offline: Scannen Sie erneut, sobald der Standort antwortet.
count-check-sheet = Prüfen Sie die Zählliste.
count-not-open = Zählauftrag { $count } ist { $state }: Er nimmt keine Scans an
count-tap-open = Tippen Sie einen offenen Zählauftrag an.
count-chosen = Zählauftrag { $count } · Zone { $zone }
count-epcs-more = { $epcs } und { $more } weitere
count-seen = Gezählt
count-expected = / erwartet
count-missing = Fehlend
count-unexpected = · unerwartet
count-missing-list = Fehlend: { $epcs }
count-unexpected-list = Unerwartet: { $epcs }
count-age = Zone { $zone } in { $location }. Zahlen des Standorts { $age } alt; +{ $since } { $since ->
    [one] Tag
   *[other] Tags
  } von diesem Gerät seitdem, davon { $waiting } noch zu senden.
count-age-unread = Zone { $zone } in { $location }. Zahlen des Standorts: noch nicht gelesen (offline); +{ $since } { $since ->
    [one] Tag
   *[other] Tags
  } von diesem Gerät seitdem, davon { $waiting } noch zu senden.
count-age-bin = Zone { $zone } in { $location }, nur Lagerplatz { $bin }. Zahlen des Standorts { $age } alt; +{ $since } { $since ->
    [one] Tag
   *[other] Tags
  } von diesem Gerät seitdem, davon { $waiting } noch zu senden.
count-age-bin-unread = Zone { $zone } in { $location }, nur Lagerplatz { $bin }. Zahlen des Standorts: noch nicht gelesen (offline); +{ $since } { $since ->
    [one] Tag
   *[other] Tags
  } von diesem Gerät seitdem, davon { $waiting } noch zu senden.
count-bin-only = Dieser Zählauftrag gilt nur für Lagerplatz { $bin }: { $code } wird nicht gezählt
count-scan-tags-in = Tags in Lagerplatz { $bin } scannen.
count-other-zone = Lagerplatz { $bin } liegt in Zone { $zone }, nicht in Zone { $count_zone } dieses Zählauftrags
count-scan-zone-bin = Scannen Sie einen Lagerplatz aus der Zone dieses Zählauftrags.
count-bin-then-tags = Scannen Sie das Lagerplatzetikett, dann die Tags.
count-not-tag = { $code }: weder Tag noch Lagerplatzetikett
count-tag-or-bin = Scannen Sie einen Tag oder ein Lagerplatzetikett.

## Versandprüfung

mode-dispatch_verify = Versandprüfung
mode-dispatch_verify-blurb = Tags gegen die aktuelle Ladeliste prüfen.
dispatch-offline = Offline: Die Versandprüfung liest die Ladeliste live und kann erst öffnen, wenn der Standort antwortet. Verbinden Sie sich neu und scannen Sie die Ladeliste erneut.
dispatch-offline-resume = Offline: Die Ladeliste wird live gelesen; scannen Sie sie erneut, sobald der Standort antwortet.
dispatch-need = Ladeliste { $manifest }
dispatch-need-none = Ladeliste (live)
dispatch-prompt = Ladeliste scannen
dispatch-prompt-small = live vom Standort gelesen
dispatch-prompt-tags = Tags für { $manifest } scannen
dispatch-prompt-tags-small = ein Tag, der nicht darauf steht, stoppt die Rampe
dispatch-no-answer = Versandprüfung nicht geöffnet: Der Standort antwortet nicht ({ $manifest })
dispatch-no-manifest = Keine Ladeliste { $manifest } am Standort
dispatch-answered = Ladeliste { $manifest }: Der Standort antwortete { $status }
dispatch-not-ready = Ladeliste { $manifest } ist { $state }: nicht versandbereit
dispatch-close-first = Schließen Sie diese Sitzung, um eine andere Ladeliste als { $manifest } zu prüfen
dispatch-read-again = Ladeliste { $manifest } erneut gelesen
dispatch-opened = Ladeliste { $manifest }: { $units } Einheit(en)
tick-verified = geprüft
tick-waiting = hier geprüft, noch zu senden
tick-undo-waiting = hier storniert, noch zu senden
tick-not-verified = nicht geprüft
dispatch-verified = Geprüft
dispatch-waiting-here = ({ $count } warten hier)
dispatch-age = Ladeliste des Standorts vor { $age } gelesen, mit den Antworten seitdem; { $waiting } { $waiting ->
    [one] Scan
   *[other] Scans
  } dieses Geräts noch zu senden.
dispatch-units =
    .aria-label = Einheiten auf der Ladeliste
dispatch-unit = { $epc }: { $tick }
dispatch-unit-pallet = { $epc } auf Palette { $sscc }: { $tick }
dispatch-pallet = · Palette { $sscc }
dispatch-manifest-first = Scannen Sie zuerst die Ladeliste: { $code } wurde nicht erfasst.
dispatch-manifest-first-next = Scannen Sie die Ladeliste, dann ihre Paletten und Tags.
dispatch-pallet-shown = { $units ->
    [one] { $code } (Palette, { $units } Einheit)
   *[other] { $code } (Palette, { $units } Einheiten)
  }
dispatch-not-on = Nicht auf der Ladeliste
dispatch-pallet-not-on = Palette { $sscc } steht nicht auf { $manifest }. Nehmen Sie sie von der Rampe und bestätigen Sie dann.
dispatch-not-tag = { $code }: kein Tag
dispatch-tag-not-on = { $epc } steht nicht auf { $manifest }. Nehmen Sie die Einheit von der Rampe und bestätigen Sie dann.

## Wareneingang

mode-receive = Wareneingang
mode-receive-blurb = Tags gegen einen WE-Beleg zählen.
receive-grn = WE-Beleg { $grn }
receive-need-none = WE-Beleg
receive-prompt = WE-Beleg scannen oder antippen
receive-prompt-small = Der Wareneingang braucht einen WE-Beleg mit QS-Freigabe
receive-prompt-tags = Tags für { $grn } scannen
receive-prompt-sku = neue Tags sind Artikel { $sku }
receive-prompt-sku-lot = neue Tags sind Artikel { $sku } { $keys }
receive-prompt-sku-first = ein Tag, den der Standort nicht kennt, braucht zuerst sein Artikeletikett
receive-none-waiting = Kein offener WE-Beleg in der Kopie dieses Geräts: Scannen Sie einen.
receive-choice = { $lines } Position(en) · { $state }
receive-qc = QS { $qc }
receive-encode-on = Tags codieren: an
receive-encode-off = Tags codieren: aus
receive-no-sku = Kein Artikeletikett gescannt
receive-sku = Artikel { $sku }
receive-sku-lot = Artikel { $sku } · { $lot }
receive-last-label = Letztes Etikett: { $epc } · { $lot }
receive-last-label-sku = Letztes Etikett: { $epc } · Artikel { $sku } · { $lot }
receive-grn-not-cached = Dieser WE-Beleg ist noch nicht in der Kopie des Geräts.
receive-expected = Soll
receive-received = Erhalten
receive-queued-here = Hier wartend
receive-age = Erhalten laut Standort vor { $age }, mit den Antworten seitdem; hier wartend: Scans dieses Geräts, die noch zu senden sind.
receive-age-never = Erhalten laut Standort (nie gelesen), mit den Antworten seitdem; hier wartend: Scans dieses Geräts, die noch zu senden sind.
receive-unknown-grn = Kein WE-Beleg, den dieses Gerät kennt: { $grn }
receive-check-papers = Prüfen Sie die Nummer auf den Lieferpapieren.
receive-qc-not-accepted = WE-Beleg { $grn }: QS { $qc }; der Wareneingang braucht eine Freigabe
receive-ask-qc = Fragen Sie die QS; nehmen Sie inzwischen einen anderen WE-Beleg an.
receive-lot = Charge { $lot } · Verfall { $expiry }
receive-not-grn = { $code } ist kein WE-Beleg: nicht erfasst.
receive-grn-first = Scannen oder tippen Sie zuerst einen WE-Beleg an.
receive-gtin-no-sku = GTIN { $gtin } bezeichnet keinen Artikel in der Kopie dieses Geräts: nicht erfasst.
receive-gtin-no-sku-next = Scannen Sie das eigene Etikett des Artikels, oder bitten Sie die Schichtleitung, die GTIN des Artikels zu importieren.
receive-sku-not-on = Artikel { $sku } (GTIN { $gtin }) steht nicht auf { $grn }: nicht erfasst.
receive-check-delivery = Prüfen Sie die Lieferung gegen den WE-Beleg.
receive-not-tag = { $code }: weder Tag noch Artikel von { $grn }
receive-tag-gtin-no-sku = { $epc }: GTIN { $gtin } bezeichnet keinen Artikel in der Kopie dieses Geräts; scannen Sie zuerst sein Artikeletikett
receive-tag-unknown = { $epc }: Der Standort kennt diesen Tag nicht; scannen Sie zuerst sein Artikeletikett

## Was die Antworten des Standorts bedeuten: jeder Ablehnungsgrund und
## jeder Code, der einen Scan blockiert, mit dem nächsten Schritt (.next).

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
reason-INVALID_ITEM = Dem Scan fehlt etwas, das der Standort braucht, oder er nennt WE-Beleg, Zählauftrag oder Ladeliste einer anderen Sitzung.
    .next = Verwerfen und erneut scannen; informieren Sie die Schichtleitung, wenn es sich wiederholt.
reason-SESSION_CONFLICT = Dieses Gerät oder dieser Mitarbeiter hat am Standort bereits eine andere Sitzung offen.
    .next = Melden Sie sich am anderen Gerät ab; ist es verloren oder zurückgesetzt, bitten Sie die Schichtleitung, seine Sitzung in der Standortansicht zu schließen (Geräte, Sitzung schließen). Dann diesen Eintrag verwerfen und neu beginnen.
reason-SESSION_NOT_YOURS = Die Sitzung gehört zu einem anderen Gerät.
    .next = Verwerfen und eine neue Sitzung beginnen.
reason-SEQ_ALREADY_USED = Der Standort hat an dieser Stelle der Sitzung bereits einen anderen Eintrag.
    .next = Verwerfen; erneut scannen, wenn er gelten soll.
reason-IDEMPOTENCY_KEY_REUSED = Der Standort hat unter demselben Schlüssel einen anderen Eintrag.
    .next = Verwerfen und erneut scannen.
reason-IDEMPOTENCY_RECEIPT_UNAVAILABLE = Der Standort kann seine Antwort zu diesem Eintrag nicht lesen.
    .next = Informieren Sie die Schichtleitung; erst nach deren Freigabe erneut scannen.
reason-ALREADY_UNDONE = Der Scan wurde bereits storniert.
    .next = Verwerfen.
reason-UNIT_CONFLICT = Der Tag bzw. die Seriennummer gehört am Standort zu einer anderen Einheit.
    .next = Legen Sie die Einheit beiseite und informieren Sie die Schichtleitung.
reason-CONSTRAINT_CONFLICT = Der Standort hat ihn abgelehnt, weil er seinem Bestand widerspricht.
    .next = Verwerfen; informieren Sie die Schichtleitung, wenn es sich wiederholt.
reason-http = Der Standort hat diesen Scan so, wie er gesendet wurde, abgelehnt.
    .next = Verwerfen und erneut scannen; informieren Sie die Schichtleitung, wenn es sich wiederholt.
reason-waiting-behind = Wartet hinter einem blockierten Scan seiner Sitzung.
    .next = Entscheiden Sie den blockierten Scan in der Warteschlange.
reason-other = Der Standort hat diesen Scan abgelehnt.
    .next = Zeigen Sie ihn der Schichtleitung.

## Was aus jedem Scan wurde

outcome-pending = wird gespeichert…
outcome-kept = auf diesem Gerät gespeichert
outcome-applied = gebucht
outcome-training = als Schulung erfasst: nichts bewegt
outcome-refused = abgelehnt
outcome-blocked = blockiert: in der Warteschlange entscheiden
outcome-voided = verworfen
outcome-failed = nicht erfasst
outcome-undone = storniert
outcome-held = auf diesem Gerät gespeichert, NICHT gesendet: Dieses Gerät ist am Standort nicht zugelassen
outcome-refused-seq = Abgelehnt #{ $seq }: { $words }
undo = Stornieren
results-fewer = Nur die letzten zeigen
results-more = { $count ->
    [one] { $count } früheren Scan zeigen
   *[other] { $count } frühere Scans zeigen
  }
late-refused = { $count ->
    [one] { $count } Scan wurde vom Standort abgelehnt, nachdem er hier gespeichert war.
   *[other] { $count } Scans wurden vom Standort abgelehnt, nachdem sie hier gespeichert waren.
  }
reason-words-next = { $words } { $next }
capture-not-open = Die Sitzung ist noch nicht geöffnet.
capture-to-bin = { $code } → { $bin }
capture-row = #{ $seq } { $code }
capture-row-note = #{ $seq } { $code } · { $note }
capture-kept = Auf diesem Gerät gespeichert #{ $seq }: { $code }
capture-kept-held = Auf diesem Gerät gespeichert #{ $seq }: { $code }, NICHT gesendet: Dieses Gerät ist am Standort nicht zugelassen
capture-failed-row = { $code }: NICHT erfasst ({ $error })
capture-failed = NICHT erfasst { $code }: { $error }
undo-no-session = keine offene Sitzung für die Stornierung
undo-row = #{ $seq } Stornierung von { $code }
undo-done = Storniert: { $code } (auf diesem Gerät gespeichert; der Standort bucht es)
undo-failed = Stornierung fehlgeschlagen: { $error }
undo-nothing = Nichts zu stornieren: Stornieren wirkt auf den letzten Scan dieser Sitzung innerhalb von { $seconds } s.
rescan-no-epc = der Eintrag nennt keinen EPC
rescan-no-session = öffnen Sie eine Sitzung { $mode }, um erneut zu scannen
rescan-row = #{ $seq } { $epc } erneut gescannt

## Zeilen der Warteschlange

queue-open = öffnen { $mode } { $context } · { $operator }
queue-undo = stornieren { $target }
command-open_session = Sitzung öffnen
command-scan = Scan
command-undo = Rückgängig
command-void = Storno
command-close_session = Sitzung schließen
command-acknowledge = Bestätigung
queue-age = erfasst vor { $age }
queue-discard = Verwerfen
queue-rescan = Erneut scannen
queue-state = { $state ->
    [queued] wartend
    [sending] wird gesendet
    [done] erledigt
    [rejected] abgelehnt
    [blocked] blockiert
    [voided] verworfen
    [training] Schulung
   *[other] { $state }
  }
queue-acknowledged = { $words } (bestätigt)
queue-more-count = Mehr ({ $count } weitere)
queue-filter-decide-count = Zu entscheiden ({ $count })
queue-nothing-to-decide = Nichts wartet auf eine Entscheidung.
queue-empty = Die Warteschlange ist leer.
queue-counts = wartend { $queued } · sendend { $sending } · erledigt { $done } · abgelehnt { $rejected } · blockiert { $blocked } · verworfen { $voided }
queue-nothing-waiting = Nichts wartet.
queue-oldest = Ältester wartender: { $age }
queue-sending-now = Wird jetzt gesendet.
queue-next-try = Nächster Versuch um { DATETIME($at, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23") } (in { $in }) oder sobald der Standort wieder antwortet.
queue-action-done = { $action }: erledigt ({ $label })
queue-action-failed = { $label }: { $error }
queue-sent = { $items } in { $requests } Anfrage(n) gesendet
queue-export = Exportieren
queue-export-save = Datei speichern
queue-export-share = Teilen
queue-export-writing = Die Datei wird geschrieben…
queue-export-failed = Export fehlgeschlagen: { $error }
queue-export-share-failed = Teilen fehlgeschlagen: { $error }
queue-export-nothing = Nichts zu exportieren: Jeder Scan dieses Geräts hat den Standort erreicht.
queue-export-done = { $items ->
    [one] { $items } Eintrag
   *[other] { $items } Einträge
  } in { $name } ({ $size }). Sie bleiben hier in der Warteschlange und gehen an den Standort, sobald er wieder antwortet.

## Geräteeinrichtung: was die Prüfung ergab

setup-not-url = { $url } ist keine URL: Sie beginnt mit https:// und nennt Host und Port des Standorts.
setup-not-web = { $url } ist keine Webadresse: Sie beginnt mit https://.
setup-mixed = { $url } ist reines http: Diese Seite ist https und darf es nicht erreichen. Verwenden Sie die https://-Adresse des Standorts.
setup-port-hint = Der HTTPS-Port des Standorts ist { $port }, sofern nicht anders eingestellt: Versuchen Sie https://{ $host }:{ $port }.
setup-plain-port = Port { $port } von { $host } antwortet mit reinem HTTP, nicht HTTPS: Das ist der unverschlüsselte Port des Standorts. Verwenden Sie die HTTPS-Adresse (https://{ $host }:{ $https }, sofern nicht anders eingestellt).
setup-certificate = Dieses Gerät vertraut dem Zertifikat von { $origin } nicht, oder Port { $port } ist nicht der HTTPS-Port des Standorts. Stimmt der Port, installieren Sie einmalig die CA des Standorts: Öffnen Sie { $trust } (oder lassen Sie sie von der IT verteilen) und speichern Sie dann erneut.
setup-unreachable = Der Standort antwortet nicht unter { $origin }: Auf Port { $port } nahm niemand die Verbindung an. Prüfen Sie Adresse und Port, ob der Standort läuft und ob dieses Gerät in seinem Netz ist.
setup-cross-origin = { $origin } antwortet, aber diese Seite (von { $page }) darf es nicht lesen: Öffnen Sie den Einrichtungslink auf dem Standort selbst.
setup-token = Der Standort hat das Geräte-Token abgelehnt (401): Es ist falsch eingegeben, oder Gerät { $device } wurde inzwischen gesperrt oder hat ein neues Token. Bitten Sie die Schichtleitung um einen neuen Einrichtungslink ({ $command }) und öffnen Sie ihn.
setup-site-status = Der Standort antwortete { $status } auf die Token-Prüfung.
setup-other-device = Dieses Token gehört zu Gerät { $named }, nicht zu { $device }: Verwenden Sie die ID, die der Standort dazu ausgegeben hat.
setup-checking = Prüfe { $url }…
setup-not-switched = Nicht gewechselt: Dieses Gerät bleibt { $device } → { $site }.
setup-done = Eingerichtet als { $device } → { $site }
setup-done-but = Eingerichtet als { $device } → { $site }. { $why }
setup-not-yet = Noch nicht eingerichtet: Scans bleiben auf diesem Gerät gespeichert, bis es eingerichtet ist.

## Eine neue Version der App

release-schema-newer = Erfassung gestoppt: Dieses Gerät hält Scans einer neueren Version, als der Standort jetzt ausliefert. Nichts in der Warteschlange geht verloren. Bitten Sie den Standort, die neuere Version wieder auszuliefern.
release-stopped = Erfassung gestoppt: Die App ist nicht gestartet ({ $code }: { $message }). Nichts in der Warteschlange geht verloren.
release-ready = Update bereit: Build { $build }. Zwischen zwei Scans neu laden.
release-failed = Update { $build } wurde nicht installiert ({ $code }); dieses Gerät bleibt auf Build { $running }.
release-updating = Die App wird zwischen den Scans aktualisiert…

## Etiketten, gedruckt und codiert am Drucker der Station

printer-paper-out = Papier leer
printer-head-open = Druckkopf offen
printer-ribbon-out = Farbband leer
printer-paused = pausiert
printer-offline = Drucker { $printer } ist offline
printer-unreached = der Standort hat Drucker { $printer } beim letzten Abruf nicht erreicht
printer-faults = Drucker { $printer }: { $faults }
label-waiting = Etikett: wird beim Drucker der Station angefordert, sobald der Standort diesen Scan hat
label-waits = Etikett wartet: { $trouble }. Es wird einmal gedruckt, sobald der Drucker wieder bereit ist; kein ENCODE, bevor der Tag zurückgelesen ist.
label-queued = Etikett bei { $printer } eingereiht.
label-printing = Drucken und Codieren bei { $printer }…
label-printed = Tag bei { $printer } geschrieben und zurückgelesen: ENCODE gebucht.
label-void = Ungültiger Tag bei { $printer }: nichts zurückgelesen, daher kein ENCODE. Legen Sie das Etikett beiseite: Die Schichtleitung entscheidet in der Standortansicht (neu drucken oder verwerfen).
label-read-wrong = Tag bei { $printer } falsch zurückgelesen: geschrieben { $wrote }, gelesen { $read }; kein ENCODE. Legen Sie das Etikett beiseite: Die Schichtleitung entscheidet in der Standortansicht (neu drucken oder verwerfen).
label-read-other = Tag bei { $printer } falsch zurückgelesen: geschrieben { $wrote }, gelesen etwas anderes; kein ENCODE. Legen Sie das Etikett beiseite: Die Schichtleitung entscheidet in der Standortansicht (neu drucken oder verwerfen).
label-in-doubt = { $printer } hat für dieses Etikett nicht geantwortet: Es kann gedruckt sein, und kein ENCODE ist gebucht. Die Schichtleitung entscheidet in der Standortansicht (neu drucken oder verwerfen).
label-dismissed = Etikett in der Standortansicht verworfen: kein ENCODE gebucht.
label-state = Etikett bei { $printer }: { $state }.
station-unread = Drucker der Station: noch nicht gelesen (der Standort hat nicht geantwortet).
station-none = Für diese Station ist kein Drucker eingestellt: Dieses Gerät schreibt die Tags selbst.
station-trouble = Etiketten werden bei { $printer } gedruckt und codiert, aber { $trouble }: Die Etiketten warten dort und werden gedruckt, sobald er wieder bereit ist.
station-ready = Etiketten werden bei { $printer } gedruckt und codiert: Jeder Tag wird zurückgelesen, bevor sein ENCODE gebucht wird.

## Werte des Bestandsbuchs, wie die Bildschirme sie zeigen

unit-state-new = neu
unit-state-in_stock = auf Lager
unit-state-dispatched = versandt
unit-state-missing = fehlt

grn-state-open = offen
grn-state-needs_resolution = Klärung nötig
grn-state-complete = abgeschlossen

grn-qc-accepted = freigegeben
grn-qc-held = gesperrt
grn-qc-rejected = abgelehnt

manifest-state-draft = im Entwurf
manifest-state-packing = beim Verpacken
manifest-state-dispatched = versandt
manifest-state-verified = geprüft

count-state-open = offen
count-state-closed = geschlossen
count-state-approved = genehmigt
count-state-cancelled = storniert
