# Teksty terminala ręcznego po polsku. Terminologia magazynowa (zob.
# GLOSSARY.md); kody, lokalizacje, EPC i wartości GS1 przychodzą jako
# argumenty i nigdy nie są tłumaczone.

## Pasek stanu i komunikaty

bar-waiting = { $count ->
    [one] czeka
    [few] czekają
    [many] czeka
   *[other] czeka
  }
bar-oldest = najstarszy { $age }
bar-attention = { $count } do decyzji
bar-cache = dane { $age }
bar-cache-none = dane –
bar-cache-loading = dane: wczytano { $units }
bar-label = { $figures }. Otwiera kolejkę.
bar-label-waiting = { $count } w kolejce
net-refused = Brak dostępu
net-no-site = Brak magazynu
net-online = Online
net-offline = Offline
menu-button = Menu
    .aria-label = Menu
worker-starting = uruchamianie…
worker-ready = gotowe
worker-not-secure = Połączenie niezabezpieczone: otwórz ten magazyn przez https:// (najpierw zaufaj CA magazynu ze strony /trust.html).
worker-no-support = Brak obsługi service workera: skanów nie da się przechować offline.
banner-refused = Ten terminal nie ma już dostępu do magazynu: poproś kierownika zmiany o ponowną konfigurację.
banner-refused-kept = Wszystkie skany pozostają w tym terminalu i zostaną wysłane po ponownej konfiguracji.
banner-training = SZKOLENIE
banner-training-words = Ten terminal nie jest uruchomiony produkcyjnie: magazyn zapisuje jego skany jako ćwiczenie i niczego nie przesuwa.
late-show = Pokaż
late-seen = Widziane
release-reload = Przeładuj
reference-loading = Wczytywanie danych podstawowych: dotąd { $units } jedn.
reference-partial = Dane podstawowe: dotąd { $units } jedn.; wczytywanie wznowi się od tego miejsca
starting-placeholder = uruchamianie: skany są zachowywane
starting-words = Uruchamianie: to, co zeskanujesz teraz, zostanie zachowane i odczytane za chwilę.

## Odcinki czasu

ago-seconds = { $n } s
ago-minutes = { $n } min
ago-hours = { $n } h
ago-days = { $n } d
ago-none = –

## Konfiguracja terminala

setup-title = Skonfiguruj ten terminal
setup-language = Język tego terminala
setup-language-operator = Gdy zalogowany jest operator czytający inny język, terminal mówi jego językiem; ten wraca po wylogowaniu.
setup-hint = Otwórz link konfiguracyjny, który widok magazynu pokazuje jako kod QR, albo wpisz trzy wartości wypisane przez { $command }.
setup-site-url = Adres URL magazynu
setup-device-id = ID terminala
setup-device-token = Token terminala
setup-save = Zapisz
setup-anyway = Zapisz mimo to: magazyn jest chwilowo niedostępny
back = Wstecz

## Wybór trybu i logowanie

picker-operator = Operator
operator-change = Zmień
operator-signout = Wyloguj
picker-choose = Wybierz tryb
picker-sign-in = Zaloguj się
picker-scan-badge = Zeskanuj swój identyfikator
picker-scan-badge-first = Najpierw zeskanuj swój identyfikator
picker-tap-mode = Dotknij trybu
picker-session-closed = Kierownik zmiany zamknął tę sesję w magazynie. Nic zeskanowanego później się nie liczy: zeskanuj identyfikator, aby zacząć od nowa.
picker-no-profile = Ten terminal nie zna jeszcze swojego profilu: odczyta go z magazynu po połączeniu.
picker-no-modes = Profil { $profile } nie ma żadnego trybu terminala.
picker-device = { $device } · { $profile }
picker-summary = { $count ->
    [one] { $mode } zamknięty: { $count } skan, zaksięgowane { $applied }, odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
    [few] { $mode } zamknięty: { $count } skany, zaksięgowane { $applied }, odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
    [many] { $mode } zamknięty: { $count } skanów, zaksięgowane { $applied }, odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
   *[other] { $mode } zamknięty: { $count } skanu, zaksięgowane { $applied }, odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
  }
picker-summary-undone = { $count ->
    [one] { $mode } zamknięty: { $count } skan, zaksięgowane { $applied } (z tego cofnięte { $undone }), odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
    [few] { $mode } zamknięty: { $count } skany, zaksięgowane { $applied } (z tego cofnięte { $undone }), odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
    [many] { $mode } zamknięty: { $count } skanów, zaksięgowane { $applied } (z tego cofnięte { $undone }), odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
   *[other] { $mode } zamknięty: { $count } skanu, zaksięgowane { $applied } (z tego cofnięte { $undone }), odrzucone { $refused }, do wysłania { $waiting }. Kolejka pokazuje każdy z osobna.
  }
session-open-failed = Nie udało się otworzyć sesji: { $error }
sign-in-not-known = { $code } nie jest identyfikatorem operatora znanym magazynowi
sign-in-refused = { $why }: nie zalogowano. Zeskanuj własny identyfikator.
signed-in = Zalogowano: { $operator }
signed-out = Wylogowano: { $operator }.
signed-out-idle = Wylogowano po { $idle } bez skanu. Zeskanuj identyfikator, aby kontynuować.
operator-label = { $name } ({ $badge })

## Ekran trybu

mode-needs =
    .aria-label = Czego potrzebuje ten tryb
results-label =
    .aria-label = Ostatnie skany
switch-mode = Zmień tryb
close-session = Zamknij sesję
mode-need-missing = brak:

## Kolejka

queue-title = Kolejka
queue-retry = Ponów teraz
queue-refresh = Odśwież
queue-filters =
    .aria-label = Pokaż
queue-filter-all = Wszystkie
queue-filter-decide = Do decyzji
queue-more = Więcej

## Menu

menu-title = Menu
menu-refresh = Odśwież dane podstawowe
menu-commands = Kody kreskowe poleceń
menu-setup = Konfiguracja terminala
menu-idle = Wyloguj po bezczynności
menu-counts-legend = Obok pola skanowania, od otwarcia tej strony: ✓ skany zarejestrowane w tym terminalu, ✗ skany, których nie udało się zapisać (zeskanuj ponownie), ⊘ skany odrzucone przed rejestracją (każdy wiersz podaje powód). To, co magazyn odrzuci później, jest w Kolejce.
menu-signals-on = Dźwięk i wibracje: wł.
menu-signals-off = Dźwięk i wibracje: wył.
menu-idle-minutes = { $n } min
menu-idle-hours = { $n } h
menu-not-set-up = Nieskonfigurowany.
menu-device = { $device } → { $site }
menu-device-profile = { $device } · { $profile } → { $site }
menu-device-encodes = { $device } · { $profile } · koduje → { $site }
menu-reference = Kopia danych: jednostki { $units }, lokalizacje { $bins }, przyjęcia { $grns }, inwentaryzacje { $counts }; wiek { $age }
menu-reference-loading = Kopia danych: jednostki { $units }, lokalizacje { $bins }, przyjęcia { $grns }, inwentaryzacje { $counts }; wiek { $age } (wczytywanie)
menu-reference-never = Kopia danych: jednostki { $units }, lokalizacje { $bins }, przyjęcia { $grns }, inwentaryzacje { $counts }; nigdy kompletna
menu-reference-never-loading = Kopia danych: jednostki { $units }, lokalizacje { $bins }, przyjęcia { $grns }, inwentaryzacje { $counts }; nigdy kompletna (wczytywanie)
menu-reference-none = Kopia danych: –
menu-reference-read = Dane podstawowe odczytane.
storage-persist-granted = Przyznano trwałą pamięć.
storage-persist-advice = NIE przyznano trwałej pamięci: przeglądarka może usunąć dane tego terminala, gdy zabraknie miejsca. Dodaj Stockhop do ekranu głównego (menu przeglądarki → Zainstaluj aplikację lub Dodaj do ekranu głównego) albo zezwól tej stronie na przechowywanie danych w ustawieniach witryn przeglądarki, a potem otwórz ponownie to menu. Do tego czasu pozwól kolejce się opróżnić, zanim zabraknie miejsca.
storage-unavailable = Szacunek pamięci niedostępny.
storage-estimate = Zajęte { NUMBER($used, maximumFractionDigits: 1, minimumFractionDigits: 1) } MB z { NUMBER($quota, maximumFractionDigits: 0) } MB

## Pole skanowania i okna dialogowe

dock-scan = Skan
dock-input =
    .placeholder = czeka na skaner
dock-counts =
    .aria-label = Skany od otwarcia tej strony (menu wyjaśnia)
dock-captured-title =
    .title = zarejestrowane
dock-captured = {" "}zarejestrowane
dock-failed-title =
    .title = nie udało się zapisać
dock-failed = {" "}nie udało się zapisać
dock-refused-title =
    .title = odrzucone przed rejestracją
dock-refused = {" "}odrzucone
alert-ack = Potwierdź
alert-acknowledged = Alarm potwierdzony.
no-reply = brak odpowiedzi

## Skany odrzucone przed rejestracją

scan-answer-first = Najpierw odpowiedz na pytanie: { $code } nie został zarejestrowany.
scan-not-captured = { $code } nie został zarejestrowany.
scan-again = Zeskanuj ponownie.
scan-no-constants = Nie zarejestrowano: { $code }. Ten terminal nie odczytał jeszcze ustawień magazynu; połącz się ponownie z magazynem i zeskanuj jeszcze raz.
scan-alert-first = Najpierw potwierdź alarm: { $code } nie został zarejestrowany.
scan-mode-first = Najpierw wybierz tryb: { $code } nie został zarejestrowany.
scan-unknown-mode = nieznany tryb { $mode }
scan-not-captured-why = Nie zarejestrowano: { $error }
scan-badge-named = To identyfikator operatora { $name } ({ $badge }): nie zarejestrowano.
scan-badge = To identyfikator operatora { $badge }: nie zarejestrowano.
scan-prompt-again = { $prompt }.
scan-nothing-to-confirm = Nie ma czego potwierdzać.
signed-out-close = Wylogowano: { $operator } (CLOSE).
signed-out-nobody = Nikt nie jest zalogowany.

## Nagłówek ekranu trybu

session-open = Otwarta: { $operator } · { $session }
session-read-only = { $operator } · tylko odczyt
session-not-open = Jeszcze nie otwarta
scan-bin-units = Lokalizacja { $bin }: skanuj jej jednostki
scan-bin-first = Najpierw zeskanuj etykietę lokalizacji.

## Znajdź jednostkę

mode-find_unit = Znajdź jednostkę
mode-find_unit-blurb = Gdzie jest? Z danych tego terminala, także offline.
find-prompt = Zeskanuj tag, numer seryjny lub etykietę jednostki
find-prompt-small = odpowiedź z tego terminala
find-not-known = { $code }: nieznany
find-age = Z kopii tego terminala, wiek { $age }.
find-no-gs1-unit = { $code }: brak jednostki z tym GTIN i numerem seryjnym w kopii tego terminala
find-not-in-copy = { $code }: brak w kopii tego terminala
find-place = { $bin } · strefa { $zone } · { $location }
find-no-bin-lower = brak lokalizacji
find-bin = Lokalizacja { $bin }
find-no-bin = Brak lokalizacji
find-state = Stan
find-where = Gdzie
find-sku = Indeks
find-epc = EPC
find-serial = Numer seryjny
find-gtin = GTIN
find-gs1-serial = Numer seryjny GS1
find-lot = Partia
find-expiry = Data ważności
find-result = { $epc }: { $state }, { $bin }

## Pytania

setup-switch-title = Przełączyć na { $device } w { $site }?
setup-switch-text = { $count ->
    [one] Ten terminal przechowuje { $count } nierozliczony skan terminala { $device } w { $site }. Zostaje on w terminalu w każdym przypadku (kolejka go pokazuje), ale od teraz zostanie wysłany w nowej konfiguracji. Najpierw pozwól mu się wysłać, chyba że kierownik zmiany zdecyduje inaczej.
    [few] Ten terminal przechowuje { $count } nierozliczone skany terminala { $device } w { $site }. Zostają one w terminalu w każdym przypadku (kolejka je pokazuje), ale od teraz zostaną wysłane w nowej konfiguracji. Najpierw pozwól im się wysłać, chyba że kierownik zmiany zdecyduje inaczej.
    [many] Ten terminal przechowuje { $count } nierozliczonych skanów terminala { $device } w { $site }. Zostają one w terminalu w każdym przypadku (kolejka je pokazuje), ale od teraz zostaną wysłane w nowej konfiguracji. Najpierw pozwól im się wysłać, chyba że kierownik zmiany zdecyduje inaczej.
   *[other] Ten terminal przechowuje { $count } nierozliczonego skanu terminala { $device } w { $site }. Zostają one w terminalu w każdym przypadku (kolejka je pokazuje), ale od teraz zostaną wysłane w nowej konfiguracji. Najpierw pozwól im się wysłać, chyba że kierownik zmiany zdecyduje inaczej.
  }
setup-switch-yes = Przełącz
setup-switch-no = Zostań przy { $device }
setup-switch-how = Dotknij „{ $no }” albo zeskanuj CONFIRM, aby przełączyć.
count-close-title = Zamknąć inwentaryzację { $count }?
count-close-text = To zamyka inwentaryzację całej strefy { $zone }; magazyn wyliczy wtedy różnice.
count-close-text-figures = To zamyka inwentaryzację całej strefy { $zone }; magazyn wyliczy wtedy różnice. Brakujące { $missing }, nieoczekiwane { $unexpected } (dane magazynu sprzed { $age } oraz skany tego terminala od tego czasu).
count-close-yes = Zamknij inwentaryzację
count-close-no = Licz dalej
count-close-how = Dotknij „{ $no }” albo zeskanuj CONFIRM, aby zamknąć inwentaryzację.

## Czym jest kod, gdy ekran oczekuje czegoś innego

sign-in-not-badge-kind = { $kind ->
    [tag] { $code } to tag, a nie identyfikator operatora
    [bin] { $code } to etykieta lokalizacji, a nie identyfikator operatora
    [grn] { $code } to przyjęcie, a nie identyfikator operatora
    [count] { $code } to inwentaryzacja, a nie identyfikator operatora
   *[unit] { $code } to numer seryjny jednostki { $epc }, a nie identyfikator operatora
  }
put-other-kind = { $kind ->
    [grn] { $code } to przyjęcie, a nie jednostka ani etykieta lokalizacji: nie zarejestrowano.
   *[count] { $code } to inwentaryzacja, a nie jednostka ani etykieta lokalizacji: nie zarejestrowano.
  }
put-neither = { $code } nie jest ani jednostką, ani etykietą lokalizacji znaną magazynowi: nie zarejestrowano.
put-still = Lokalizacja to nadal { $bin }: zeskanuj jednostkę do niej albo inną etykietę lokalizacji.
put-bin-then-units = Zeskanuj etykietę lokalizacji, potem jej jednostki.
put-prompt-units = Skanuj jednostki do lokalizacji { $bin }
put-prompt-other-bin = albo inną etykietę lokalizacji
put-prompt-wait = skany jednostek czekają na nią
prompt-bin = Zeskanuj etykietę lokalizacji
bin-need = lokalizacja { $bin }
bin-need-none = etykieta lokalizacji
bin-first = Najpierw zeskanuj etykietę lokalizacji: { $code } nie został zarejestrowany.
mode-put_away = Rozlokowanie
mode-put_away-blurb = Zeskanuj etykietę lokalizacji, potem jej jednostki.

## Etykiety GS1

label-refused = Nie zarejestrowano: { $why }.
label-refused-next = Nic z niej nie zostało użyte. Zeskanuj ponownie; etykieta odrzucona dwa razy jest źle wydrukowana: odłóż towar na nową etykietę.
label-sscc = SSCC { $value }
label-gtin = GTIN { $value }
label-serial = nr ser. { $value }
label-lot = partia { $value }
label-expiry = ważn. { $value }
label-what = { $text } ({ $keys })
label-no-unit = { $what }: żadna jednostka nie ma tego GTIN i numeru seryjnego, ani w kopii tego terminala, ani w magazynie: nie zarejestrowano.
label-no-unit-next = Zeskanuj zamiast tego tag jednostki albo poproś kierownika zmiany o import jej GTIN i numeru seryjnego.
label-pallet = { $what } to etykieta palety: { $mode } przyjmuje etykietę jednostki, nie zarejestrowano.
label-sku-lot = { $what } wskazuje indeks i partię, a nie jedną jednostkę: nie zarejestrowano.
label-sku-lot-next = { $prompt }: własna etykieta lub tag jednostki.
label-nothing = { $what } nie wskazuje jednostki, palety ani partii: nie zarejestrowano.

## Inwentaryzacja

mode-cycle_count = Inwentaryzacja
mode-cycle_count-blurb = Licz strefę lokalizacja po lokalizacji.
count-need = inwentaryzacja { $count }
count-need-none = inwentaryzacja
count-prompt-choose = Zeskanuj lub dotknij inwentaryzacji
count-prompt-tags = Skanuj tagi w lokalizacji { $bin }
count-prompt-next-bin = albo następną etykietę lokalizacji
count-prompt-zone = strefa { $zone }
count-none-open = Brak otwartej inwentaryzacji w kopii tego terminala: zeskanuj jedną.
count-choice = { $location } · strefa { $zone }
count-unknown = Ten terminal nie zna takiej inwentaryzacji: { $count }
offline-scan-again = Offline: zeskanuj ponownie, gdy magazyn odpowie.
count-check-sheet = Sprawdź arkusz spisowy.
count-not-open = Inwentaryzacja { $count } ma stan { $state }: nie przyjmuje skanów
count-tap-open = Dotknij otwartej inwentaryzacji.
count-chosen = Inwentaryzacja { $count } · strefa { $zone }
count-epcs-more = { $epcs } i { $more } więcej
count-seen = Policzone
count-expected = / oczekiwane
count-missing = Brakujące
count-unexpected = · nieoczekiwane
count-missing-list = Brakujące: { $epcs }
count-unexpected-list = Nieoczekiwane: { $epcs }
count-age = Strefa { $zone } w { $location }. Dane magazynu sprzed { $age }; +{ $since } { $since ->
    [one] tag
    [few] tagi
    [many] tagów
   *[other] tagu
  } z tego terminala od tego czasu, z tego { $waiting } do wysłania.
count-age-unread = Strefa { $zone } w { $location }. Dane magazynu: jeszcze nieodczytane (offline); +{ $since } { $since ->
    [one] tag
    [few] tagi
    [many] tagów
   *[other] tagu
  } z tego terminala od tego czasu, z tego { $waiting } do wysłania.
count-age-bin = Strefa { $zone } w { $location }, tylko lokalizacja { $bin }. Dane magazynu sprzed { $age }; +{ $since } { $since ->
    [one] tag
    [few] tagi
    [many] tagów
   *[other] tagu
  } z tego terminala od tego czasu, z tego { $waiting } do wysłania.
count-age-bin-unread = Strefa { $zone } w { $location }, tylko lokalizacja { $bin }. Dane magazynu: jeszcze nieodczytane (offline); +{ $since } { $since ->
    [one] tag
    [few] tagi
    [many] tagów
   *[other] tagu
  } z tego terminala od tego czasu, z tego { $waiting } do wysłania.
count-bin-only = Ta inwentaryzacja obejmuje tylko lokalizację { $bin }: { $code } nie jest liczony
count-scan-tags-in = Skanuj tagi w lokalizacji { $bin }.
count-other-zone = Lokalizacja { $bin } jest w strefie { $zone }, a nie w strefie { $count_zone } tej inwentaryzacji
count-scan-zone-bin = Zeskanuj lokalizację ze strefy tej inwentaryzacji.
count-bin-then-tags = Zeskanuj etykietę lokalizacji, potem jej tagi.
count-not-tag = { $code }: to nie tag ani etykieta lokalizacji
count-tag-or-bin = Zeskanuj tag lub etykietę lokalizacji.

## Kontrola wydania

mode-dispatch_verify = Kontrola wydania
mode-dispatch_verify-blurb = Sprawdzaj tagi z bieżącym listem przewozowym.
dispatch-offline = Offline: kontrola wydania czyta list przewozowy na żywo i nie otworzy się, dopóki magazyn nie odpowie. Połącz się ponownie i zeskanuj list jeszcze raz.
dispatch-offline-resume = Offline: list przewozowy jest czytany na żywo; zeskanuj go ponownie, gdy magazyn odpowie.
dispatch-need = list { $manifest }
dispatch-need-none = list przewozowy (na żywo)
dispatch-prompt = Zeskanuj list przewozowy
dispatch-prompt-small = czytany na żywo z magazynu
dispatch-prompt-tags = Skanuj tagi dla { $manifest }
dispatch-prompt-tags-small = tag spoza listy zatrzymuje rampę
dispatch-no-answer = Kontrola wydania się nie otworzyła: magazyn nie odpowiada ({ $manifest })
dispatch-no-manifest = Brak listu przewozowego { $manifest } w magazynie
dispatch-answered = List { $manifest }: magazyn odpowiedział { $status }
dispatch-not-ready = List { $manifest } ma stan { $state }: nie jest gotowy do wydania
dispatch-close-first = Zamknij tę sesję, aby sprawdzić inny list niż { $manifest }
dispatch-read-again = List { $manifest } odczytany ponownie
dispatch-opened = List { $manifest }: jednostki { $units }
tick-verified = sprawdzona
tick-waiting = sprawdzona tutaj, do wysłania
tick-undo-waiting = cofnięta tutaj, do wysłania
tick-not-verified = niesprawdzona
dispatch-verified = Sprawdzone
dispatch-waiting-here = ({ $count } czeka tutaj)
dispatch-age = List magazynu odczytany { $age } temu, z odpowiedziami od tego czasu; { $waiting } { $waiting ->
    [one] skan
    [few] skany
    [many] skanów
   *[other] skanu
  } tego terminala do wysłania.
dispatch-units =
    .aria-label = Jednostki na liście przewozowym
dispatch-unit = { $epc }: { $tick }
dispatch-unit-pallet = { $epc } na palecie { $sscc }: { $tick }
dispatch-pallet = · paleta { $sscc }
dispatch-manifest-first = Najpierw zeskanuj list przewozowy: { $code } nie został zarejestrowany.
dispatch-manifest-first-next = Zeskanuj list przewozowy, potem jego palety i tagi.
dispatch-pallet-shown = { $units ->
    [one] { $code } (paleta, { $units } jednostka)
    [few] { $code } (paleta, { $units } jednostki)
    [many] { $code } (paleta, { $units } jednostek)
   *[other] { $code } (paleta, { $units } jednostki)
  }
dispatch-not-on = Spoza listu przewozowego
dispatch-pallet-not-on = Paleta { $sscc } nie jest na { $manifest }. Zdejmij ją z rampy, potem potwierdź.
dispatch-not-tag = { $code }: to nie tag
dispatch-tag-not-on = { $epc } nie jest na { $manifest }. Zdejmij z rampy, potem potwierdź.

## Przyjęcie

mode-receive = Przyjęcie
mode-receive-blurb = Licz tagi według dokumentu przyjęcia.
receive-grn = Przyjęcie { $grn }
receive-need-none = Przyjęcie
receive-prompt = Zeskanuj lub dotknij przyjęcia
receive-prompt-small = przyjęcie wymaga dokumentu zatwierdzonego przez kontrolę jakości
receive-prompt-tags = Skanuj tagi dla { $grn }
receive-prompt-sku = nowe tagi to indeks { $sku }
receive-prompt-sku-lot = nowe tagi to indeks { $sku } { $keys }
receive-prompt-sku-first = tag nieznany magazynowi wymaga najpierw etykiety indeksu
receive-none-waiting = Brak oczekującego przyjęcia w kopii tego terminala: zeskanuj jedno.
receive-choice = pozycje: { $lines } · { $state }
receive-qc = KJ { $qc }
receive-encode-on = Kodowanie tagów: wł.
receive-encode-off = Kodowanie tagów: wył.
receive-no-sku = Nie zeskanowano etykiety indeksu
receive-sku = Indeks { $sku }
receive-sku-lot = Indeks { $sku } · { $lot }
receive-last-label = Ostatnia etykieta: { $epc } · { $lot }
receive-last-label-sku = Ostatnia etykieta: { $epc } · indeks { $sku } · { $lot }
receive-grn-not-cached = Tego przyjęcia nie ma jeszcze w kopii terminala.
receive-expected = Oczekiwane
receive-received = Przyjęte
receive-queued-here = W kolejce tutaj
receive-age = Przyjęte według magazynu { $age } temu, z odpowiedziami od tego czasu; w kolejce tutaj: skany tego terminala do wysłania.
receive-age-never = Przyjęte według magazynu (nigdy nieodczytane), z odpowiedziami od tego czasu; w kolejce tutaj: skany tego terminala do wysłania.
receive-unknown-grn = Ten terminal nie zna takiego przyjęcia: { $grn }
receive-check-papers = Sprawdź numer w dokumentach dostawy.
receive-qc-not-accepted = Przyjęcie { $grn }: KJ { $qc }; przyjęcie wymaga zatwierdzenia
receive-ask-qc = Zapytaj kontrolę jakości; w międzyczasie przyjmij inny dokument.
receive-lot = partia { $lot } · ważność { $expiry }
receive-not-grn = { $code } nie jest przyjęciem: nie zarejestrowano.
receive-grn-first = Najpierw zeskanuj lub dotknij przyjęcia.
receive-gtin-no-sku = GTIN { $gtin } nie wskazuje żadnego indeksu w kopii tego terminala: nie zarejestrowano.
receive-gtin-no-sku-next = Zeskanuj własną etykietę indeksu albo poproś kierownika zmiany o import GTIN indeksu.
receive-sku-not-on = Indeksu { $sku } (GTIN { $gtin }) nie ma na { $grn }: nie zarejestrowano.
receive-check-delivery = Sprawdź dostawę z dokumentem przyjęcia.
receive-not-tag = { $code }: to nie tag ani indeks z { $grn }
receive-tag-gtin-no-sku = { $epc }: GTIN { $gtin } nie wskazuje żadnego indeksu w kopii tego terminala; najpierw zeskanuj etykietę indeksu
receive-tag-unknown = { $epc }: magazyn nie zna tego tagu; najpierw zeskanuj etykietę indeksu

## Co znaczą odpowiedzi magazynu: każdy powód odrzucenia i każdy kod,
## który blokuje skan, z następnym krokiem (.next).

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
reason-INVALID_ITEM = Skanowi brakuje czegoś, czego potrzebuje magazyn, albo wskazuje przyjęcie, inwentaryzację lub list innej sesji.
    .next = Odrzuć go i zeskanuj ponownie; powiadom kierownika zmiany, jeśli się powtarza.
reason-SESSION_CONFLICT = Ten terminal lub operator ma już w magazynie inną otwartą sesję.
    .next = Wyloguj się na drugim terminalu; jeśli zaginął lub został zresetowany, poproś kierownika zmiany o zamknięcie jego sesji w widoku magazynu (Urządzenia, Zamknij sesję). Potem odrzuć ten element i zacznij od nowa.
reason-SESSION_NOT_YOURS = Sesja należy do innego terminala.
    .next = Odrzuć go i rozpocznij nową sesję.
reason-SEQ_ALREADY_USED = Magazyn ma już inny element w tym miejscu sesji.
    .next = Odrzuć go; zeskanuj ponownie, jeśli ma obowiązywać.
reason-IDEMPOTENCY_KEY_REUSED = Magazyn ma inny element pod tym samym kluczem.
    .next = Odrzuć go i zeskanuj ponownie.
reason-IDEMPOTENCY_RECEIPT_UNAVAILABLE = Magazyn nie może odczytać swojej odpowiedzi dla tego elementu.
    .next = Powiadom kierownika zmiany; nie skanuj ponownie, dopóki nie zdecyduje.
reason-ALREADY_UNDONE = Skan został już cofnięty.
    .next = Odrzuć go.
reason-UNIT_CONFLICT = Ten tag lub numer seryjny należy w magazynie do innej jednostki.
    .next = Odłóż jednostkę i powiadom kierownika zmiany.
reason-CONSTRAINT_CONFLICT = Magazyn go odrzucił jako sprzeczny z tym, co ma zapisane.
    .next = Odrzuć go; powiadom kierownika zmiany, jeśli się powtarza.
reason-http = Magazyn odrzucił ten skan w wysłanej postaci.
    .next = Odrzuć go i zeskanuj ponownie; powiadom kierownika zmiany, jeśli się powtarza.
reason-waiting-behind = Czeka za zablokowanym skanem swojej sesji.
    .next = Zdecyduj o zablokowanym skanie w kolejce.
reason-other = Magazyn odrzucił ten skan.
    .next = Pokaż go kierownikowi zmiany.

## Czym skończył się każdy skan

outcome-pending = zapisywanie…
outcome-kept = zachowany w tym terminalu
outcome-applied = zaksięgowany
outcome-training = zapisany jako szkolenie: nic nie przesunięto
outcome-refused = odrzucony
outcome-blocked = zablokowany: zdecyduj w kolejce
outcome-voided = odrzucony ręcznie
outcome-failed = nie zarejestrowano
outcome-undone = cofnięty
outcome-held = zachowany w tym terminalu, NIE wysłany: ten terminal nie ma dostępu do magazynu
outcome-refused-seq = Odrzucony #{ $seq }: { $words }
undo = Cofnij
results-fewer = Pokaż tylko ostatnie
results-more = { $count ->
    [one] Pokaż { $count } wcześniejszy skan
    [few] Pokaż { $count } wcześniejsze skany
    [many] Pokaż { $count } wcześniejszych skanów
   *[other] Pokaż { $count } wcześniejszego skanu
  }
late-refused = { $count ->
    [one] { $count } skan odrzucony przez magazyn po zachowaniu tutaj.
    [few] { $count } skany odrzucone przez magazyn po zachowaniu tutaj.
    [many] { $count } skanów odrzuconych przez magazyn po zachowaniu tutaj.
   *[other] { $count } skanu odrzuconego przez magazyn po zachowaniu tutaj.
  }
reason-words-next = { $words } { $next }
capture-not-open = Sesja nie jest jeszcze otwarta.
capture-to-bin = { $code } → { $bin }
capture-row = #{ $seq } { $code }
capture-row-note = #{ $seq } { $code } · { $note }
capture-kept = Zachowano w tym terminalu #{ $seq }: { $code }
capture-kept-held = Zachowano w tym terminalu #{ $seq }: { $code }, NIE wysłano: ten terminal nie ma dostępu do magazynu
capture-failed-row = { $code }: NIE zarejestrowano ({ $error })
capture-failed = NIE zarejestrowano { $code }: { $error }
undo-no-session = brak otwartej sesji, w której można zapisać cofnięcie
undo-row = #{ $seq } cofnięcie { $code }
undo-done = Cofnięto: { $code } (zachowane w tym terminalu; magazyn to zaksięguje)
undo-failed = Cofnięcie nie powiodło się: { $error }
undo-nothing = Nie ma czego cofnąć: cofnięcie działa na ostatni skan tej sesji w ciągu { $seconds } s.
rescan-no-epc = element nie wskazuje EPC
rescan-no-session = otwórz sesję { $mode }, aby zeskanować ponownie
rescan-row = #{ $seq } { $epc } zeskanowany ponownie

## Wiersze kolejki

queue-open = otwarcie { $mode } { $context } · { $operator }
queue-undo = cofnięcie { $target }
command-open_session = Otwarcie sesji
command-scan = Skan
command-undo = Cofnięcie
command-void = Unieważnienie
command-close_session = Zamknięcie sesji
command-acknowledge = Potwierdzenie
queue-age = zarejestrowany { $age } temu
queue-discard = Odrzuć
queue-rescan = Zeskanuj ponownie
queue-state = { $state ->
    [queued] w kolejce
    [sending] wysyłanie
    [done] gotowe
    [rejected] odrzucony
    [blocked] zablokowany
    [voided] odrzucony ręcznie
    [training] szkolenie
   *[other] { $state }
  }
queue-acknowledged = { $words } (potwierdzone)
queue-more-count = Więcej (jeszcze { $count })
queue-filter-decide-count = Do decyzji ({ $count })
queue-nothing-to-decide = Nic nie czeka na decyzję.
queue-empty = Kolejka jest pusta.
queue-counts = w kolejce { $queued } · wysyłane { $sending } · gotowe { $done } · odrzucone { $rejected } · zablokowane { $blocked } · odrzucone ręcznie { $voided }
queue-nothing-waiting = Nic nie czeka.
queue-oldest = Najstarszy oczekujący: { $age }
queue-sending-now = Wysyłanie.
queue-next-try = Następna próba o { DATETIME($at, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23") } (za { $in }) albo gdy tylko magazyn znów odpowie.
queue-action-done = { $action }: gotowe ({ $label })
queue-action-failed = { $label }: { $error }
queue-sent = wysłano { $items } w { $requests } żądaniu/żądaniach
queue-export = Eksportuj
queue-export-save = Zapisz plik
queue-export-share = Udostępnij
queue-export-writing = Zapisywanie pliku…
queue-export-failed = Eksport nie powiódł się: { $error }
queue-export-share-failed = Udostępnianie nie powiodło się: { $error }
queue-export-nothing = Nie ma czego eksportować: każdy skan z tego urządzenia dotarł do magazynu.
queue-export-done = { $items ->
    [one] { $items } pozycja
    [few] { $items } pozycje
    [many] { $items } pozycji
   *[other] { $items } pozycji
  } w { $name } ({ $size }). Zostają tu w kolejce i trafią do magazynu, gdy znów odpowie.

## Konfiguracja terminala: co wykazała kontrola

setup-not-url = { $url } nie jest adresem URL: zaczyna się od https:// i podaje host oraz port magazynu.
setup-not-web = { $url } nie jest adresem internetowym: zaczyna się od https://.
setup-mixed = { $url } to zwykłe http: ta strona działa przez https i nie może się z nim połączyć. Użyj adresu https:// magazynu.
setup-port-hint = Port HTTPS magazynu to { $port }, o ile nie ustawiono inaczej: spróbuj https://{ $host }:{ $port }.
setup-plain-port = Port { $port } hosta { $host } odpowiada zwykłym HTTP, a nie HTTPS: to niezaszyfrowany port magazynu. Użyj adresu HTTPS magazynu (https://{ $host }:{ $https }, o ile nie ustawiono inaczej).
setup-certificate = Ten terminal nie ufa certyfikatowi { $origin } albo port { $port } nie jest portem HTTPS magazynu. Jeśli port jest prawidłowy, zainstaluj jednorazowo CA magazynu: otwórz { $trust } (lub poproś dział IT o dystrybucję), potem zapisz ponownie.
setup-unreachable = Magazyn nie odpowiada pod { $origin }: nikt nie przyjął połączenia na porcie { $port }. Sprawdź adres i port, czy magazyn działa i czy ten terminal jest w jego sieci.
setup-cross-origin = { $origin } odpowiada, ale ta strona (z { $page }) nie może tego odczytać: otwórz link konfiguracyjny na samym magazynie.
setup-token = Magazyn odrzucił token terminala (401): jest błędnie wpisany albo terminal { $device } został zablokowany lub dostał nowy token. Poproś kierownika zmiany o nowy link konfiguracyjny ({ $command }) i otwórz go.
setup-site-status = Magazyn odpowiedział { $status } na sprawdzenie tokenu.
setup-other-device = Ten token należy do terminala { $named }, a nie { $device }: użyj ID wypisanego razem z nim.
setup-checking = Sprawdzanie { $url }…
setup-not-switched = Bez zmiany: ten terminal pozostaje { $device } → { $site }.
setup-done = Skonfigurowano jako { $device } → { $site }
setup-done-but = Skonfigurowano jako { $device } → { $site }. { $why }
setup-not-yet = Jeszcze nieskonfigurowany: skany są przechowywane w tym terminalu do czasu konfiguracji.

## Nowa wersja aplikacji

release-schema-newer = Rejestracja zatrzymana: ten terminal przechowuje skany z nowszej wersji niż ta, którą magazyn teraz udostępnia. Nic z kolejki nie zginie. Poproś o ponowne udostępnienie nowszej wersji.
release-stopped = Rejestracja zatrzymana: aplikacja się nie uruchomiła ({ $code }: { $message }). Nic z kolejki nie zginie.
release-ready = Aktualizacja gotowa: wersja { $build }. Przeładuj między skanami.
release-failed = Aktualizacja { $build } nie została zainstalowana ({ $code }); ten terminal pozostaje przy wersji { $running }.
release-updating = Aktualizowanie aplikacji między skanami…

## Etykiety drukowane i kodowane na drukarce stanowiska

printer-paper-out = brak papieru
printer-head-open = otwarta głowica
printer-ribbon-out = brak taśmy
printer-paused = wstrzymana
printer-offline = drukarka { $printer } jest offline
printer-unreached = magazyn nie połączył się z drukarką { $printer } przy ostatniej wizycie
printer-faults = drukarka { $printer }: { $faults }
label-waiting = Etykieta: zostanie zamówiona na drukarce stanowiska, gdy magazyn otrzyma ten skan
label-waits = Etykieta czeka: { $trouble }. Wydrukuje się raz, gdy drukarka wróci; bez ENCODE, dopóki tag nie zostanie odczytany zwrotnie.
label-queued = Etykieta w kolejce na { $printer }.
label-printing = Drukowanie i kodowanie na { $printer }…
label-printed = Tag zapisany i odczytany zwrotnie na { $printer }: ENCODE zaksięgowane.
label-void = Wadliwy tag na { $printer }: nic nie odczytano zwrotnie, więc bez ENCODE. Odłóż etykietę: kierownik zmiany zdecyduje w widoku magazynu (ponowny druk lub odrzucenie).
label-read-wrong = Tag błędnie odczytany na { $printer }: zapisano { $wrote }, odczytano { $read }; bez ENCODE. Odłóż etykietę: kierownik zmiany zdecyduje w widoku magazynu (ponowny druk lub odrzucenie).
label-read-other = Tag błędnie odczytany na { $printer }: zapisano { $wrote }, odczytano coś innego; bez ENCODE. Odłóż etykietę: kierownik zmiany zdecyduje w widoku magazynu (ponowny druk lub odrzucenie).
label-in-doubt = { $printer } nie odpowiedziała w sprawie tej etykiety: mogła zostać wydrukowana, a ENCODE nie zaksięgowano. Kierownik zmiany zdecyduje w widoku magazynu (ponowny druk lub odrzucenie).
label-dismissed = Etykieta odrzucona w widoku magazynu: ENCODE nie zaksięgowano.
label-state = Etykieta na { $printer }: { $state }.
station-unread = Drukarka stanowiska: jeszcze nieodczytana (magazyn nie odpowiedział).
station-none = Dla tego stanowiska nie ustawiono drukarki: ten terminal sam zapisuje tagi.
station-trouble = Etykiety są drukowane i kodowane na { $printer }, ale { $trouble }: etykiety czekają tam i wydrukują się, gdy drukarka wróci.
station-ready = Etykiety są drukowane i kodowane na { $printer }: każdy tag jest odczytywany zwrotnie przed zaksięgowaniem ENCODE.

## Wartości z księgi magazynowej, tak jak pokazują je ekrany

unit-state-new = nowa
unit-state-in_stock = na stanie
unit-state-dispatched = wydana
unit-state-missing = brak

grn-state-open = otwarte
grn-state-needs_resolution = do wyjaśnienia
grn-state-complete = zakończone

grn-qc-accepted = zatwierdzona
grn-qc-held = wstrzymana
grn-qc-rejected = odrzucona

manifest-state-draft = szkic
manifest-state-packing = w pakowaniu
manifest-state-dispatched = wydany
manifest-state-verified = zweryfikowany

count-state-open = otwarta
count-state-closed = zamknięta
count-state-approved = zatwierdzona
count-state-cancelled = anulowana
