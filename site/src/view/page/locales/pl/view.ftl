# Widok magazynu (site/src/view/page) po polsku. Terminy: GLOSSARY.md.
# Wartości w komunikatach ($device, $bin, $epc…) to kody i zostają bez zmian.

## Strona

page-title = Stockhop · magazyn
page-heading = Stockhop magazyn
figure-queue-depth = Kolejka
figure-sync-latency = Mediana opóźnienia synchronizacji
commands-link = Kody kreskowe poleceń
language-label = Język
sign-out = Wyloguj
updated = zaktualizowano { $time } ({ $zone })
not-updated = nie zaktualizowano: { $error }
never = nigdy
action-failed = Niepowodzenie: { $error }

## Trend kolejki

trend-draining = Opróżnia się normalnie
trend-growing = Rośnie
trend-escalated = Eskalacja
trend-none = Brak statusu

## Czas i okresy

stamp-day-time = { $day } { $time }
age-minutes = { $minutes } min
age-hours = { $hours } godz. { $minutes } min
latency-ms = { $ms } ms
latency-seconds = { $seconds } s
latency-minutes = { $minutes } min { $seconds } s

## Logowanie

sign-in-heading = Zaloguj się
sign-in-token = Token administratora, z polecenia
sign-in-button = Zaloguj
sign-in-refused = To nie jest token administratora.

## Komunikaty

alerts-region =
    .aria-label = Urządzenia offline
storage-full = W magazynie zabrakło miejsca na dane: terminale zachowują skany i wyślą je ponownie, gdy miejsce się zwolni
device-offline-since = { $device } ({ $form }) offline od { $time }
printer-fault = { $printer } (drukarka): { $fault }
rejecting-label = Urządzenie z wieloma odrzuceniami
rejecting-count =
    { $count ->
        [one] { $count } odrzucenie w ostatnich { $minutes } min, { $rate } na minutę
        [few] { $count } odrzucenia w ostatnich { $minutes } min, { $rate } na minutę
       *[many] { $count } odrzuceń w ostatnich { $minutes } min, { $rate } na minutę
    }
rejecting-reason = najczęściej: { $reason }
rejecting-no-reason = bez podanej przyczyny
rejecting-latest = ostatnie o { $time }

## Profile urządzeń

form-fxr90 = bramka stała
form-mc3390xr = terminal
form-rfd40 = czytnik nakładany
form-zt411r = drukarka

## Widok firmy (magazyny centrali)

sites-heading = Magazyny
sites-all = ← Wszystkie magazyny
site-own-view = Otwórz własny widok magazynu
fact-last-contact = Ostatni kontakt
fact-status = Status
fact-status-not-sent = jeszcze nie wysłano (magazyn ma starszą wersję)
fact-none = brak
fact-queue-depth = Kolejka
fact-oldest-item = Najstarszy element
fact-oldest-since = { $age } (od { $time })
fact-none-waiting = nic nie czeka
fact-devices-offline = Urządzenia offline
fact-outbox = Skrzynka nadawcza
fact-outbox-sent = wysłano
fact-outbox-waiting = { $count } czeka, { $lag } opóźnienia
fact-status-taken = Status z
fact-hops-received = Odebrane ruchy
fact-restored = Odtworzono z kopii
fact-restored-at = { $time } (epoka { $epoch }, ruchy ciągną się po #{ $after })
fact-first-contact = Pierwszy kontakt
contact-silent = cisza od { $age } ({ $time })
contact-ago = { $age } temu ({ $time })

## Wykres

chart-heading = Kolejka offline i opóźnienie synchronizacji · 12 godz.
chart-queue-depth = kolejka
chart-sync-latency = mediana opóźnienia synchronizacji
chart-sync-latency-axis = mediana opóźnienia synchronizacji (s)
chart-site-time = czas magazynu ({ $zone })
chart-image =
    .alt = Kolejka magazynu i mediana opóźnienia synchronizacji co 5 minut w ciągu ostatnich 12 godzin

## Urządzenia

devices-heading = Urządzenia
devices-device = Urządzenie
devices-profile = Profil
devices-online = Połączenie
devices-last-seen = Ostatnio widziane
devices-depth = Kolejka
devices-oldest = Najstarszy
devices-session = Sesja
devices-revoke = Unieważnij
device-online = online
device-offline = offline ({ $alert })
device-not-heard = jeszcze się nie zgłosiło
device-simulation = (szkolenie)
device-rejecting = wiele odrzuceń
commission = Uruchom produkcyjnie
commission-confirm = Księgować skany { $device } naprawdę?
revoke = Unieważnij
revoke-confirm = Unieważnić { $device }?
close-session = Zamknij sesję
close-session-confirm = Zamknąć sesję { $device }?
session-open = { $operator } · { $mode }
session-since = { $operator } · { $mode } od { $time }

## Tryby

mode-receive = przyjęcie
mode-put-away = rozlokowanie
mode-cycle-count = inwentaryzacja
mode-dispatch-verify = kontrola wydania
mode-find-unit = szukaj jednostki

## Dodawanie urządzenia

enroll-summary = Dodaj urządzenie
enroll-device-id = Id urządzenia
enroll-profile = Profil
profile-option-mc3390xr = mc3390xr (terminal)
profile-option-rfd40 = rfd40 (czytnik nakładany)
profile-option-fxr90 = fxr90 (bramka stała)
profile-option-zt411r = zt411r (drukarka)
enroll-commissioned = Produkcyjne (księguje naprawdę)
enroll-add = Dodaj
enroll-qr =
    .alt = Link konfiguracji jako kod QR
enroll-scan = Zeskanuj terminalem w jego pole konfiguracji:

## Uratowane kolejki

rescues-heading = Uratowane kolejki
stranded-none = Żadne unieważnione urządzenie nie zostawiło skanów.
stranded-device = Unieważnione urządzenie
stranded-revoked = Unieważniono
stranded-queued = Wtedy w kolejce
stranded-file = Plik ratunkowy
stranded-imported = zaimportowano { $time }
stranded-not-imported = nie zaimportowano: zaimportuj jego plik ({ $command })
rescues-device = Urządzenie
rescues-imported = Zaimportowano
rescues-applied = Zaksięgowane
rescues-replayed = Już w magazynie
rescues-refused = Odrzucone

## Drukarki

printers-heading = Drukarki
printers-printer = Drukarka
printers-address = Adres
printers-status = Status
printers-last-status = Ostatni status
printers-jobs = Zadania w kolejce
printer-ready = gotowa
printer-not-answering = nie odpowiada: { $error }
fault-paper-out = brak papieru
fault-head-open = otwarta głowica
fault-ribbon-out = brak taśmy
fault-paused = wstrzymana
printer-summary = Dodaj drukarkę
printer-id = Id drukarki
printer-address = Adres
printer-profile = Profil
printer-option-zt411r = zt411r (drukarka etykiet RFID)
printer-stations = Stanowiska: terminale, które przyjmują tu z kodowaniem
printer-add = Dodaj

## Wersje

builds-heading = Wersje
builds-served = Udostępniana
builds-schema = schemat
build-devices =
    { $count ->
        [one] { $count } urządzenie
        [few] { $count } urządzenia
       *[many] { $count } urządzeń
    }
build-served = udostępniana
build-old = stara wersja
builds-none = Żaden terminal nie zgłosił wersji.
device-old-build = stara wersja { $build }
device-build = wersja { $build }
device-not-capturing = nie rejestruje: { $problem }
device-capturing = rejestruje
builds-all-served = Wszystkie terminale mają udostępnianą wersję.

## Rejestratory i odbiornik

terminals-heading = Rejestratory
terminals-none = Żaden rejestrator się nie zgłosił.
terminal-seen = widziany { $time }
backfill-form =
    .aria-label = Poproś rejestrator ponownie o jego zapisy
backfill-intro = Poproś rejestrator iclock ponownie o jego zapisy (po awarii), czas w strefie tej przeglądarki:
backfill-serial = Numer seryjny
backfill-from = Od
backfill-to = Do
backfill-button = Pobierz ponownie
backfill-commands =
    .aria-label = Polecenia rejestratora
backfill-queued = Polecenie #{ $command } czeka na następne zapytanie { $serial }.
backfill-return = wynik { $code }
listener-heading = Odbiornik
listener-queue = Kolejka
listener-set-aside = odłożone
listener-dead-letters = niedoręczone
listener-set-aside-list =
    .aria-label = Odłożone zapisy rejestratorów
set-aside-attempts =
    { $attempts ->
        [one] { $attempts } próba, ostatnia { $time }: { $error }
        [few] { $attempts } próby, ostatnia { $time }: { $error }
       *[many] { $attempts } prób, ostatnia { $time }: { $error }
    }
set-aside-next = następna próba { $time }
set-aside-none = Nic nie odłożono.
dead-letters-none = Brak niedoręczonych.

## Centrala

central-heading = Centrala
outbox-forwarding = Przekazuje jako
outbox-to = do
outbox-outbox = skrzynka nadawcza
outbox-oldest = najstarszy
outbox-dead-letters = niedoręczone
outbox-off = (przekazywanie wyłączone)
outbox-failed = Ostatnie doręczenie nie powiodło się { $age } temu: { $error }
central-site = Magazyn
central-first-seen = Pierwszy raz
central-last-seen = Ostatnio
central-hops = Odebrane ruchy
central-last-seq = Ostatni nr

## Decyzje

decisions-heading = Decyzje
decisions-counts = Różnice inwentaryzacyjne do zatwierdzenia
decisions-grns = Przyjęcia do rozliczenia
decisions-corrections = Korekty
decisions-print-jobs = Zadania druku
decisions-log = Dziennik decyzji
counts-none = Żadna różnica inwentaryzacyjna nie czeka.
grns-none = Żadne przyjęcie nie czeka.
corrections-none = Nic do poprawienia.
corrections-count = ({ $count })
corrections-more = ({ $shown } pokazanych, najnowsze; czeka jeszcze { $more } odrzuconych skanów)
kind-count-variance = Różnica inwentaryzacyjna
kind-grn-resolution = Przyjęcie do rozliczenia
kind-rejected-item = Odrzucone na terminalu
kind-late-undo = Cofnięcie niewykonane
kind-late-undo-expired = cofnięcie po ponad { $seconds } s
kind-late-undo-refused = cofnięcie, którego terminal nie może wykonać
kind-terminal-failed = Zapis rejestratora odrzucony
context-device = urządzenie { $device }
context-operator = operator { $operator }
context-epc = EPC { $epc }
context-bin = lokalizacja { $bin }
context-grn = przyjęcie { $grn }
context-manifest = list przewozowy { $manifest }
context-count = inwentaryzacja { $count }
context-captured = zarejestrowano { $time }
context-recorded = zaksięgowano { $time }
variance-missing = Brakuje:
variance-unexpected = Nieoczekiwane:
grn-line = { $sku }: przyjęto { $received } z { $expected }
grn-line-short = , brakuje { $units }
grn-line-over = , nadwyżka { $units }
grn-line-tags = { " · " }tagi { $tags }
grn-line-no-tags = { " · " }bez tagów
decision-note = Notatka do { $decision }
    .placeholder = Notatka (powód)
why = Powód: { $words }
choice = { $action }: { $words }

## Słowa decyzji (summary_id, reason_words_id, dismiss_id i correct_id
## stołu decyzji, z ich args)

decision-count = Inwentaryzacja { $count } w { $location } / { $zone }: brakujące { $missing }, nieoczekiwane { $unexpected }
decision-count-bin = Inwentaryzacja { $count } lokalizacji { $bin } w { $location } / { $zone }: brakujące { $missing }, nieoczekiwane { $unexpected }
decision-count-matches = inwentaryzacja znalazła każdą oczekiwaną jednostkę i nic więcej
decision-count-differs = inwentaryzacja różni się od stanu, którego lokalizacja oczekiwała w strefie
decision-count-dismiss = stan pozostaje bez zmian: inwentaryzacja pozostaje niezatwierdzona i niczego nie księguje.
decision-count-correct = { $missing ->
        [one] jedna brakująca jednostka zostaje oznaczona jako brakująca
        [few] { $missing } brakujące jednostki zostają oznaczone jako brakujące
       *[other] { $missing } brakujących jednostek zostaje oznaczonych jako brakujące
    }, { $unexpected ->
        [one] jedna nieoczekiwana jednostka trafia do lokalizacji, w której ją policzono
        [few] { $unexpected } nieoczekiwane jednostki trafiają do lokalizacji, w której je policzono
       *[other] { $unexpected } nieoczekiwanych jednostek trafia do lokalizacji, w której je policzono
    } (ruchy ADJUST).
decision-grn = Przyjęcie { $grn }: brak { $short }, nadwyżka { $excess }, { $lines ->
        [one] w jednej pozycji
       *[other] w pozycjach: { $lines }
    }
decision-grn-why = przyjęcie zamknięto z pozycjami, które nie otrzymały oczekiwanej ilości
decision-grn-dismiss = przyjęcie jest kompletne tak, jak przyjęto: każda pozycja z brakiem lub nadwyżką jest księgowana jako ruch ADJUST z artykułem i ilością.
decision-late-undo = Nie udało się cofnąć nr { $seq } dla { $unit } ({ $mode }) na { $device }.
decision-late-undo-dismiss = skan pozostaje tak, jak go zapisano.
decision-late-undo-receive = przyjęcie zostaje wycofane: { $unit } opuszcza swoją pozycję przyjęcia.
decision-late-undo-dispatch = wydanie zostaje wycofane: { $unit } wraca do swojej lokalizacji i jest niesprawdzona na liście przewozowej.
decision-late-undo-count = skan inwentaryzacji zostaje wycofany: { $unit } nie jest już policzona.
decision-late-undo-put-away = rozlokowanie zostaje wycofane: { $unit } wraca tam, gdzie była.
decision-item = Odrzucono { $command ->
        [scan] skan
        [undo] cofnięcie
       *[other] { $command }
    } nr { $seq } ({ $unit }, { $mode }) na { $device }.
decision-item-dismiss = odrzucenie pozostaje i nic nie jest księgowane.
decision-item-correct = { $unit } jest na stanie w lokalizacji { $bin } (ruch ADJUST).
decision-terminal = Zapis ({ $kind }) dla { $subject } z rejestratora { $terminal } został odrzucony przez księgę stanów (HTTP { $status })
decision-terminal-unanswered = Zapis ({ $kind }) dla { $subject } z rejestratora { $terminal } został odrzucony przez księgę stanów (brak odpowiedzi)
decision-terminal-why = księga stanów odrzuciła go ostatecznie (HTTP { $status }): { $answer }
decision-terminal-why-unanswered = księga stanów odrzuciła go ostatecznie (brak odpowiedzi): { $answer }
decision-terminal-dismiss = zapis pozostaje odrzucony.
decision-terminal-correct = zapis trafia ponownie do księgi stanów (gdy usunięto to, co go odrzuciło, np. rejestrator uruchomiono produkcyjnie).

## Zapisy i źródła rejestratora

record-kind-attendance = obecność
record-kind-tag-read = odczyt tagu
record-kind-code-read = odczyt kodu
terminal-source-iclock = rejestrator czasu pracy (iclock)
terminal-source-zebra = czytnik RFID (Zebra)
terminal-source-framed = czytnik (framed)
confirm-action = { $action }?
correct = Popraw
dismiss = Odrzuć
correct-count-variance = Zatwierdź różnicę
correct-grn-resolution = Zaksięguj pozycje
correct-late-undo = Cofnij skan
correct-rejected-item = Potwierdź skan
correct-terminal-failed = Wyślij ponownie
dismiss-grn-resolution = Przyjmij jak przyjęto
settled-dismiss = Odrzucono
settled-correct = Poprawiono
settled-acknowledge = Potwierdzono na terminalu
settled-rescan = Zeskanowano ponownie na terminalu
settled-by = przez { $admin } o { $time }
settled-note = „{ $note }”
settled-no-note = bez notatki
settled-hops = ruchy { $hops }
settled-no-hops = bez ruchów
settled-none = Nic jeszcze nie rozstrzygnięto.

## Zadania druku

print-read-back-mismatch = tag odczytany błędnie
print-void-tag = tag unieważniony
print-no-answer = drukarka nie odpowiada
print-interrupted = przerwano podczas wysyłania
print-job = { $label } { $subject } na { $printer }
print-read = odczytano { $tag }
reprint = Drukuj ponownie
reprint-confirm = Potwierdź ponowny druk
dismiss-confirm = Potwierdź odrzucenie
print-jobs-none = Żadne zadanie druku nie czeka.

## Dlaczego magazyn odrzucił skan: opis i następny krok (.next).

reason-stale_state = Jednostka zmieniła się w magazynie po tym, jak ten terminal ostatnio ją odczytał.
    .next = Zeskanuj ponownie (terminal najpierw ponownie odczyta jednostkę) albo potwierdź.
reason-session_not_open = Sesja tego skanu nigdy nie została otwarta w magazynie.
    .next = Sprawdź pierwszy element sesji (dlaczego go odrzucono), potem rozpocznij nową sesję.
reason-session_already_opened = Ta sesja była już otwarta.
    .next = Nic do zrobienia; potwierdź.
reason-session_already_closed = Ta sesja była już zamknięta.
    .next = Nic do zrobienia; potwierdź.
reason-session_closed = Kierownik zmiany zamknął tę sesję w magazynie przed wykonaniem tego skanu.
    .next = Zeskanuj identyfikator, aby rozpocząć nową sesję, potem zeskanuj ponownie.
reason-undo_window_expired = Cofnięcie przyszło ponad 2 minuty po skanie.
    .next = Poproś kierownika zmiany o korektę (jest na jego liście).
reason-unknown_target = Magazyn nigdy nie otrzymał skanu, który wskazuje to cofnięcie.
    .next = Potwierdź; sprawdź sam skan w kolejce.
reason-cannot_undo_an_undo = Cofnięcia nie można cofnąć.
    .next = Zeskanuj towar ponownie, jeśli ma obowiązywać.
reason-target_rejected = Skan został odrzucony, więc nie ma czego cofać.
    .next = Potwierdź.
reason-target_not_undoable = Ten skan nie zmienił niczego, co da się cofnąć.
    .next = Potwierdź; zapytaj kierownika zmiany, jeśli coś musi się zmienić.
reason-target_not_applied = Skan nie został jeszcze zaksięgowany.
    .next = Poczekaj na zaksięgowanie, potem cofnij ponownie.
reason-target_not_rejected = Ten element nie został odrzucony, więc nie ma czego potwierdzać.
    .next = Nic do zrobienia.
reason-unknown_operator = Tego identyfikatora nie ma na liście operatorów magazynu.
    .next = Zeskanuj własny identyfikator albo poproś kierownika zmiany o dodanie.
reason-mode_not_allowed = Ten terminal nie może tego zrobić (jego profil).
    .next = Użyj terminala, który może; zapytaj kierownika zmiany o ten terminal.
reason-read_only_mode = Znajdź jednostkę nigdy niczego nie zmienia w magazynie.
    .next = Nic do zrobienia; potwierdź.
reason-unknown_bin = Magazyn nie ma lokalizacji z tą etykietą.
    .next = Zeskanuj ponownie etykietę lokalizacji albo poproś kierownika zmiany o dodanie lokalizacji.
reason-unknown_unit = Magazyn nie zna tego tagu ani numeru seryjnego.
    .next = Odłóż jednostkę i powiadom kierownika zmiany.
reason-unit_state = Tej jednostki nie można rozlokować: jest wydana lub zaginiona.
    .next = Odłóż ją i powiadom kierownika zmiany.
reason-grn_not_accepted = To przyjęcie jest nieznane albo kontrola jakości go nie zatwierdziła.
    .next = Sprawdź numer przyjęcia; zapytaj kontrolę jakości lub kierownika zmiany.
reason-not_on_grn = Indeksu tej jednostki nie ma na dokumencie przyjęcia.
    .next = Odłóż ją; powiadom kierownika zmiany (złe przyjęcie lub zła dostawa).
reason-excess_line = Pozycja przyjęcia ma już wszystkie oczekiwane jednostki.
    .next = Odłóż nadmiarową jednostkę i powiadom kierownika zmiany.
reason-already_received = Ta jednostka została już przyjęta.
    .next = Odłóż ją; to może być zduplikowany tag.
reason-count_not_open = Inwentaryzacja jest zamknięta, zatwierdzona lub anulowana.
    .next = Wybierz otwartą inwentaryzację albo poproś kierownika zmiany o otwarcie nowej.
reason-manifest_not_ready = List przewozowy jest nieznany albo nie jest w kompletacji ani wydany.
    .next = Sprawdź numer listu; zapytaj kierownika zmiany.
reason-not_on_manifest = Tej jednostki nie ma na liście przewozowym.
    .next = Nie ładuj jej na samochód i powiadom kierownika zmiany.
