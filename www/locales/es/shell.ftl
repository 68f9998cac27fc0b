# Los textos del terminal portátil en español. Términos del oficio de
# almacén (ver GLOSSARY.md); los códigos, ubicaciones, EPC y valores GS1
# llegan como argumentos y nunca se traducen.

## Barra de estado y avisos

bar-waiting = { $count ->
    [one] en espera
   *[other] en espera
  }
bar-oldest = más antiguo { $age }
bar-attention = { $count } por decidir
bar-cache = datos { $age }
bar-cache-none = datos –
bar-cache-loading = datos { $units } unidades…
bar-label = { $figures }. Abre la cola.
bar-label-waiting = { $count } en espera
net-refused = No autorizado
net-no-site = Sin centro
net-online = En línea
net-offline = Sin conexión
menu-button = Menú
    .aria-label = Menú
worker-starting = iniciando…
worker-ready = listo
worker-not-secure = No seguro: abra este centro por https:// (antes confíe en la CA del centro desde /trust.html).
worker-no-support = Sin soporte de service worker: los escaneos no se pueden guardar sin conexión.
banner-refused = Este terminal ya no está autorizado en el centro: pida a un supervisor que lo configure de nuevo.
banner-refused-kept = Todos los escaneos siguen guardados en este terminal y se envían cuando vuelva a estar configurado.
banner-training = FORMACIÓN
banner-training-words = Este terminal no está puesto en servicio: el centro registra sus escaneos como práctica y no mueve nada.
late-show = Mostrarlos
late-seen = Visto
release-reload = Recargar
reference-loading = Cargando datos maestros: { $units } unidades hasta ahora
reference-partial = Datos maestros: { $units } unidades hasta ahora; la carga continúa desde ahí
starting-placeholder = iniciando: los escaneos se guardan
starting-words = Iniciando: lo que se escanee ahora se guarda y se lee en un momento.

## Intervalos de tiempo

ago-seconds = { $n } s
ago-minutes = { $n } min
ago-hours = { $n } h
ago-days = { $n } d
ago-none = –

## Configuración del terminal

setup-title = Configurar este terminal
setup-language = Idioma de este terminal
setup-language-operator = Mientras esté conectado un operario que lee otro idioma, el terminal habla el suyo; este vuelve al cerrar sesión.
setup-hint = Abra el enlace de configuración que la vista del centro muestra como código QR, o introduzca los tres valores que imprimió { $command }.
setup-site-url = URL del centro
setup-device-id = ID del terminal
setup-device-token = Token del terminal
setup-save = Guardar
setup-anyway = Guardar igualmente: el centro no responde por ahora
back = Volver

## Selector de modo e inicio de sesión

picker-operator = Operario
operator-change = Cambiar
operator-signout = Cerrar sesión
picker-choose = Elija un modo
picker-sign-in = Iniciar sesión
picker-scan-badge = Escanee su tarjeta de operario
picker-scan-badge-first = Escanee primero su tarjeta de operario
picker-tap-mode = Toque un modo
picker-session-closed = Un supervisor cerró esta sesión en el centro. Lo escaneado después no cuenta: escanee su tarjeta para empezar de nuevo.
picker-no-profile = Este terminal aún no conoce su perfil: lo leerá del centro cuando tenga conexión.
picker-no-modes = El perfil { $profile } no tiene ningún modo de terminal portátil.
picker-device = { $device } · { $profile }
picker-summary = { $count ->
    [one] { $mode } cerrado: { $count } escaneo, { $applied } aplicados, { $refused } rechazados, { $waiting } pendientes de envío. La cola los lista uno a uno.
   *[other] { $mode } cerrado: { $count } escaneos, { $applied } aplicados, { $refused } rechazados, { $waiting } pendientes de envío. La cola los lista uno a uno.
  }
picker-summary-undone = { $count ->
    [one] { $mode } cerrado: { $count } escaneo, { $applied } aplicados, { $undone } de ellos anulados, { $refused } rechazados, { $waiting } pendientes de envío. La cola los lista uno a uno.
   *[other] { $mode } cerrado: { $count } escaneos, { $applied } aplicados, { $undone } de ellos anulados, { $refused } rechazados, { $waiting } pendientes de envío. La cola los lista uno a uno.
  }
session-open-failed = No se pudo abrir la sesión: { $error }
sign-in-not-known = { $code } no es una tarjeta de operario que el centro conozca
sign-in-refused = { $why }: sesión no iniciada. Escanee su propia tarjeta.
signed-in = Sesión iniciada: { $operator }
signed-out = { $operator } ha cerrado sesión.
signed-out-idle = Sesión cerrada tras { $idle } sin escanear. Escanee su tarjeta para seguir.
operator-label = { $name } ({ $badge })

## Pantalla del modo

mode-needs =
    .aria-label = Lo que necesita este modo
results-label =
    .aria-label = Últimos escaneos
switch-mode = Cambiar de modo
close-session = Cerrar sesión de trabajo
mode-need-missing = falta:

## Cola

queue-title = Cola
queue-retry = Reintentar ahora
queue-refresh = Actualizar
queue-filters =
    .aria-label = Mostrar
queue-filter-all = Todos
queue-filter-decide = Por decidir
queue-more = Más

## Menú

menu-title = Menú
menu-refresh = Actualizar datos maestros
menu-commands = Códigos de barras de comandos
menu-setup = Configuración del terminal
menu-idle = Cerrar sesión tras inactividad
menu-counts-legend = Junto al campo de escaneo, desde que se abrió esta página: ✓ escaneos capturados en este terminal, ✗ escaneos que no pudo guardar (escanéelos de nuevo), ⊘ escaneos rechazados antes de capturarse (cada línea dice por qué). Lo que el centro rechace después aparece en la Cola.
menu-signals-on = Sonido y vibración: activados
menu-signals-off = Sonido y vibración: desactivados
menu-idle-minutes = { $n } min
menu-idle-hours = { $n } h
menu-not-set-up = Sin configurar.
menu-device = { $device } → { $site }
menu-device-profile = { $device } · { $profile } → { $site }
menu-device-encodes = { $device } · { $profile } · codifica → { $site }
menu-reference = Copia de datos maestros: { $units } unidades, { $bins } ubicaciones, { $grns } recepciones, { $counts } inventarios; antigüedad { $age }
menu-reference-loading = Copia de datos maestros: { $units } unidades, { $bins } ubicaciones, { $grns } recepciones, { $counts } inventarios; antigüedad { $age } (cargando)
menu-reference-never = Copia de datos maestros: { $units } unidades, { $bins } ubicaciones, { $grns } recepciones, { $counts } inventarios; nunca completa
menu-reference-never-loading = Copia de datos maestros: { $units } unidades, { $bins } ubicaciones, { $grns } recepciones, { $counts } inventarios; nunca completa (cargando)
menu-reference-none = Copia de datos maestros: –
menu-reference-read = Datos maestros leídos.
storage-persist-granted = Almacenamiento persistente concedido.
storage-persist-advice = Almacenamiento persistente NO concedido: el navegador puede borrar lo que guarda este terminal cuando falte espacio. Añada Stockhop a la pantalla de inicio (menú del navegador → Instalar aplicación o Añadir a pantalla de inicio), o permita a este sitio guardar datos en la configuración de sitios del navegador, y vuelva a abrir este menú. Mientras tanto, deje que la cola se vacíe antes de que el terminal se quede sin espacio.
storage-unavailable = Estimación de almacenamiento no disponible.
storage-estimate = En uso { NUMBER($used, maximumFractionDigits: 1, minimumFractionDigits: 1) } MB de { NUMBER($quota, maximumFractionDigits: 0) } MB

## Campo de escaneo y diálogos

dock-scan = Escanear
dock-input =
    .placeholder = esperando al lector
dock-counts =
    .aria-label = Escaneos desde que se abrió esta página (el menú lo explica)
dock-captured-title =
    .title = capturados
dock-captured = {" "}capturados
dock-failed-title =
    .title = no se pudieron guardar
dock-failed = {" "}no se pudieron guardar
dock-refused-title =
    .title = rechazados antes de capturarse
dock-refused = {" "}rechazados
alert-ack = Confirmar
alert-acknowledged = Alerta confirmada.
no-reply = sin respuesta

## Escaneos rechazados antes de capturarse

scan-answer-first = Responda primero a la pregunta: { $code } no se capturó.
scan-not-captured = { $code } no se capturó.
scan-again = Escanéelo de nuevo.
scan-no-constants = No capturado: { $code }. Este terminal aún no ha leído la configuración del centro; vuelva a conectarse al centro y escanee de nuevo.
scan-alert-first = Confirme primero la alerta: { $code } no se capturó.
scan-mode-first = Elija primero un modo: { $code } no se capturó.
scan-unknown-mode = modo desconocido { $mode }
scan-not-captured-why = No capturado: { $error }
scan-badge-named = Es la tarjeta de { $name } ({ $badge }): no capturado.
scan-badge = Es la tarjeta del operario { $badge }: no capturado.
scan-prompt-again = { $prompt }.
scan-nothing-to-confirm = Nada que confirmar.
signed-out-close = { $operator } ha cerrado sesión (CLOSE).
signed-out-nobody = Nadie ha iniciado sesión.

## Cabecera de la pantalla del modo

session-open = Abierta: { $operator } · { $session }
session-read-only = { $operator } · solo lectura
session-not-open = Aún sin abrir
scan-bin-units = Ubicación { $bin }: escanee sus unidades
scan-bin-first = Escanee primero una etiqueta de ubicación.

## Buscar una unidad

mode-find_unit = Buscar unidad
mode-find_unit-blurb = ¿Dónde está? Desde este terminal, también sin conexión.
find-prompt = Escanee un tag, número de serie o etiqueta de unidad
find-prompt-small = respondido desde este terminal
find-not-known = { $code }: desconocido
find-age = De la copia de este terminal, antigüedad { $age }.
find-no-gs1-unit = { $code }: ninguna unidad con este GTIN y número de serie en la copia de este terminal
find-not-in-copy = { $code }: no está en la copia de este terminal
find-place = { $bin } · zona { $zone } · { $location }
find-no-bin-lower = sin ubicación
find-bin = Ubicación { $bin }
find-no-bin = Sin ubicación
find-state = Estado
find-where = Dónde
find-sku = SKU
find-epc = EPC
find-serial = N.º de serie
find-gtin = GTIN
find-gs1-serial = N.º de serie GS1
find-lot = Lote
find-expiry = Caducidad
find-result = { $epc }: { $state }, { $bin }

## Preguntas

setup-switch-title = ¿Cambiar a { $device } en { $site }?
setup-switch-text = { $count ->
    [one] Este terminal guarda { $count } escaneo de { $device } en { $site } aún sin resolver. Se queda en el terminal en cualquier caso (la cola lo muestra), pero a partir de ahora se envía con la nueva configuración. Deje que se envíe primero salvo que un supervisor diga lo contrario.
   *[other] Este terminal guarda { $count } escaneos de { $device } en { $site } aún sin resolver. Se quedan en el terminal en cualquier caso (la cola los muestra), pero a partir de ahora se envían con la nueva configuración. Deje que se envíen primero salvo que un supervisor diga lo contrario.
  }
setup-switch-yes = Cambiar
setup-switch-no = Seguir como { $device }
setup-switch-how = Toque «{ $no }» o escanee CONFIRM para cambiar.
count-close-title = ¿Cerrar el inventario { $count }?
count-close-text = Esto cierra el inventario de toda la zona { $zone }; después el centro calcula las diferencias.
count-close-text-figures = Esto cierra el inventario de toda la zona { $zone }; después el centro calcula las diferencias. Faltan { $missing }, inesperados { $unexpected } (cifras del centro con antigüedad { $age }, más los escaneos de este terminal desde entonces).
count-close-yes = Cerrar el inventario
count-close-no = Seguir contando
count-close-how = Toque «{ $no }» o escanee CONFIRM para cerrar el inventario.

## Qué es un código cuando no es lo que pide la pantalla

sign-in-not-badge-kind = { $kind ->
    [tag] { $code } es un tag, no una tarjeta de operario
    [bin] { $code } es una etiqueta de ubicación, no una tarjeta de operario
    [grn] { $code } es una recepción, no una tarjeta de operario
    [count] { $code } es un inventario, no una tarjeta de operario
   *[unit] { $code } es el número de serie de la unidad { $epc }, no una tarjeta de operario
  }
put-other-kind = { $kind ->
    [grn] { $code } es una recepción, no una unidad ni una etiqueta de ubicación: no capturado.
   *[count] { $code } es un inventario, no una unidad ni una etiqueta de ubicación: no capturado.
  }
put-neither = { $code } no es ni una unidad ni una etiqueta de ubicación que el centro conozca: no capturado.
put-still = La ubicación sigue siendo { $bin }: escanee una unidad para ella u otra etiqueta de ubicación.
put-bin-then-units = Escanee la etiqueta de la ubicación y después sus unidades.
put-prompt-units = Escanee unidades para la ubicación { $bin }
put-prompt-other-bin = u otra etiqueta de ubicación
put-prompt-wait = los escaneos de unidades esperan a ella
prompt-bin = Escanee una etiqueta de ubicación
bin-need = ubicación { $bin }
bin-need-none = etiqueta de ubicación
bin-first = Escanee primero una etiqueta de ubicación: { $code } no se capturó.
mode-put_away = Ubicar
mode-put_away-blurb = Escanee una etiqueta de ubicación y después sus unidades.

## Etiquetas GS1

label-refused = No capturado: { $why }.
label-refused-next = No se usó nada de ella. Escanéela de nuevo; una etiqueta rechazada dos veces está mal impresa: aparte el artículo para una etiqueta nueva.
label-sscc = SSCC { $value }
label-gtin = GTIN { $value }
label-serial = serie { $value }
label-lot = lote { $value }
label-expiry = caducidad { $value }
label-what = { $text } ({ $keys })
label-no-unit = { $what }: ninguna unidad tiene este GTIN y número de serie, ni en la copia de este terminal ni en el centro: no capturado.
label-no-unit-next = Escanee el tag de la unidad, o pida a un supervisor que importe su GTIN y número de serie.
label-pallet = { $what } es la etiqueta de un palé: { $mode } necesita la de una unidad, no capturado.
label-sku-lot = { $what } indica un SKU y un lote, no una unidad: no capturado.
label-sku-lot-next = { $prompt }: la etiqueta o el tag propio de la unidad.
label-nothing = { $what } no indica ninguna unidad, palé ni lote: no capturado.

## Inventario cíclico

mode-cycle_count = Inventario cíclico
mode-cycle_count-blurb = Contar una zona ubicación por ubicación.
count-need = inventario { $count }
count-need-none = inventario
count-prompt-choose = Escanee o toque un inventario
count-prompt-tags = Escanee los tags de la ubicación { $bin }
count-prompt-next-bin = o la siguiente etiqueta de ubicación
count-prompt-zone = zona { $zone }
count-none-open = No hay ningún inventario abierto en la copia de este terminal: escanee uno.
count-choice = { $location } · zona { $zone }
count-unknown = No es un inventario que este terminal conozca: { $count }
offline-scan-again = Sin conexión: escanéelo de nuevo cuando el centro responda.
count-check-sheet = Compruebe la hoja de recuento.
count-not-open = El inventario { $count } está { $state }: no admite escaneos
count-tap-open = Toque un inventario abierto.
count-chosen = Inventario { $count } · zona { $zone }
count-epcs-more = { $epcs } y { $more } más
count-seen = Contados
count-expected = / esperados
count-missing = Faltan
count-unexpected = · inesperados
count-missing-list = Faltan: { $epcs }
count-unexpected-list = Inesperados: { $epcs }
count-age = Zona { $zone } en { $location }. Cifras del centro con antigüedad { $age }; +{ $since } { $since ->
    [one] tag
   *[other] tags
  } de este terminal desde entonces, { $waiting } de ellos pendientes de envío.
count-age-unread = Zona { $zone } en { $location }. Cifras del centro: aún sin leer (sin conexión); +{ $since } { $since ->
    [one] tag
   *[other] tags
  } de este terminal desde entonces, { $waiting } de ellos pendientes de envío.
count-age-bin = Zona { $zone } en { $location }, solo la ubicación { $bin }. Cifras del centro con antigüedad { $age }; +{ $since } { $since ->
    [one] tag
   *[other] tags
  } de este terminal desde entonces, { $waiting } de ellos pendientes de envío.
count-age-bin-unread = Zona { $zone } en { $location }, solo la ubicación { $bin }. Cifras del centro: aún sin leer (sin conexión); +{ $since } { $since ->
    [one] tag
   *[other] tags
  } de este terminal desde entonces, { $waiting } de ellos pendientes de envío.
count-bin-only = Este inventario es solo de la ubicación { $bin }: { $code } no se cuenta
count-scan-tags-in = Escanee los tags de la ubicación { $bin }.
count-other-zone = La ubicación { $bin } está en la zona { $zone }, no en la zona { $count_zone } de este inventario
count-scan-zone-bin = Escanee una ubicación de la zona de este inventario.
count-bin-then-tags = Escanee la etiqueta de la ubicación y después sus tags.
count-not-tag = { $code }: no es un tag ni una etiqueta de ubicación
count-tag-or-bin = Escanee un tag o una etiqueta de ubicación.

## Verificación de expedición

mode-dispatch_verify = Verificar expedición
mode-dispatch_verify-blurb = Comprobar tags contra el manifiesto en vivo.
dispatch-offline = Sin conexión: la verificación de expedición lee el manifiesto en vivo y no puede abrirse hasta que el centro responda. Vuelva a conectarse y escanee el manifiesto de nuevo.
dispatch-offline-resume = Sin conexión: el manifiesto se lee en vivo; escanéelo de nuevo cuando el centro responda.
dispatch-need = manifiesto { $manifest }
dispatch-need-none = manifiesto (en vivo)
dispatch-prompt = Escanee el manifiesto
dispatch-prompt-small = leído en vivo del centro
dispatch-prompt-tags = Escanee los tags de { $manifest }
dispatch-prompt-tags-small = un tag que no figure detiene el muelle
dispatch-no-answer = La verificación de expedición no se abrió: el centro no responde ({ $manifest })
dispatch-no-manifest = No hay manifiesto { $manifest } en el centro
dispatch-answered = Manifiesto { $manifest }: el centro respondió { $status }
dispatch-not-ready = El manifiesto { $manifest } está { $state }: no está listo para expedir
dispatch-close-first = Cierre esta sesión para verificar otro manifiesto distinto de { $manifest }
dispatch-read-again = Manifiesto { $manifest } leído de nuevo
dispatch-opened = Manifiesto { $manifest }: { $units } unidad(es)
tick-verified = verificada
tick-waiting = verificada aquí, pendiente de envío
tick-undo-waiting = anulada aquí, pendiente de envío
tick-not-verified = sin verificar
dispatch-verified = Verificadas
dispatch-waiting-here = ({ $count } en espera aquí)
dispatch-age = Manifiesto del centro leído hace { $age }, con sus respuestas desde entonces; { $waiting } { $waiting ->
    [one] escaneo
   *[other] escaneos
  } de este terminal pendientes de envío.
dispatch-units =
    .aria-label = Unidades del manifiesto
dispatch-unit = { $epc }: { $tick }
dispatch-unit-pallet = { $epc } en el palé { $sscc }: { $tick }
dispatch-pallet = · palé { $sscc }
dispatch-manifest-first = Escanee primero el manifiesto: { $code } no se capturó.
dispatch-manifest-first-next = Escanee el manifiesto y después sus palés y tags.
dispatch-pallet-shown = { $units ->
    [one] { $code } (palé, { $units } unidad)
   *[other] { $code } (palé, { $units } unidades)
  }
dispatch-not-on = No figura en el manifiesto
dispatch-pallet-not-on = El palé { $sscc } no figura en { $manifest }. Retírelo del muelle y confirme.
dispatch-not-tag = { $code }: no es un tag
dispatch-tag-not-on = { $epc } no figura en { $manifest }. Retírelo del muelle y confirme.

## Recepción

mode-receive = Recepción
mode-receive-blurb = Contar tags contra una recepción.
receive-grn = Recepción { $grn }
receive-need-none = Recepción
receive-prompt = Escanee o toque una recepción
receive-prompt-small = recibir necesita una recepción aceptada por calidad
receive-prompt-tags = Escanee los tags de { $grn }
receive-prompt-sku = los tags nuevos son del SKU { $sku }
receive-prompt-sku-lot = los tags nuevos son del SKU { $sku } { $keys }
receive-prompt-sku-first = un tag que el centro no conoce necesita antes la etiqueta de su SKU
receive-none-waiting = No hay ninguna recepción pendiente en la copia de este terminal: escanee una.
receive-choice = { $lines } línea(s) · { $state }
receive-qc = Calidad { $qc }
receive-encode-on = Codificar tags: sí
receive-encode-off = Codificar tags: no
receive-no-sku = Ninguna etiqueta de SKU escaneada
receive-sku = SKU { $sku }
receive-sku-lot = SKU { $sku } · { $lot }
receive-last-label = Última etiqueta: { $epc } · { $lot }
receive-last-label-sku = Última etiqueta: { $epc } · SKU { $sku } · { $lot }
receive-grn-not-cached = Esta recepción aún no está en la copia del terminal.
receive-expected = Esperado
receive-received = Recibido
receive-queued-here = En cola aquí
receive-age = Recibido según el centro hace { $age }, con sus respuestas desde entonces; en cola aquí: escaneos de este terminal pendientes de envío.
receive-age-never = Recibido según el centro (nunca leído), con sus respuestas desde entonces; en cola aquí: escaneos de este terminal pendientes de envío.
receive-unknown-grn = No es una recepción que este terminal conozca: { $grn }
receive-check-papers = Compruebe el número con el albarán.
receive-qc-not-accepted = Recepción { $grn }: calidad { $qc }; recibir necesita que esté aceptada
receive-ask-qc = Consulte a calidad; mientras tanto reciba otra recepción.
receive-lot = lote { $lot } · caducidad { $expiry }
receive-not-grn = { $code } no es una recepción: no capturado.
receive-grn-first = Escanee o toque primero una recepción.
receive-gtin-no-sku = El GTIN { $gtin } no corresponde a ningún SKU en la copia de este terminal: no capturado.
receive-gtin-no-sku-next = Escanee la etiqueta propia del SKU, o pida a un supervisor que importe el GTIN del SKU.
receive-sku-not-on = El SKU { $sku } (GTIN { $gtin }) no figura en { $grn }: no capturado.
receive-check-delivery = Compruebe la entrega contra la recepción.
receive-not-tag = { $code }: no es un tag ni un SKU de { $grn }
receive-tag-gtin-no-sku = { $epc }: el GTIN { $gtin } no corresponde a ningún SKU en la copia de este terminal; escanee antes la etiqueta de su SKU
receive-tag-unknown = { $epc }: el centro no conoce este tag; escanee antes la etiqueta de su SKU

## Qué significan las respuestas del centro: cada motivo de rechazo y cada
## código que bloquea un escaneo, con el siguiente paso (.next).

reason-stale_state = La unidad cambió en el centro después de que este terminal la leyera por última vez.
    .next = Vuelva a escanearla (el terminal lee antes la unidad de nuevo) o confirme.
reason-session_not_open = La sesión de este escaneo nunca se abrió en el centro.
    .next = Mire el primer elemento de la sesión (por qué se rechazó) y después inicie una sesión nueva.
reason-session_already_opened = Esta sesión ya estaba abierta.
    .next = Nada que hacer; confirme.
reason-session_already_closed = Esta sesión ya estaba cerrada.
    .next = Nada que hacer; confirme.
reason-session_closed = Un supervisor cerró esta sesión en el centro antes de este escaneo.
    .next = Escanee su tarjeta para iniciar una sesión nueva y vuelva a escanearlo.
reason-undo_window_expired = La anulación llegó más de 2 minutos después del escaneo.
    .next = Pida a un supervisor que lo corrija (está en su lista).
reason-unknown_target = El centro nunca recibió el escaneo que indica esta anulación.
    .next = Confirme; revise el propio escaneo en la cola.
reason-cannot_undo_an_undo = Una anulación no se puede anular.
    .next = Vuelva a escanear el artículo si debe mantenerse.
reason-target_rejected = El escaneo fue rechazado, así que no hay nada que anular.
    .next = Confirme.
reason-target_not_undoable = Ese escaneo no cambió nada que se pueda anular.
    .next = Confirme; consulte a un supervisor si algo debe cambiar.
reason-target_not_applied = El escaneo aún no se ha aplicado.
    .next = Espere a que se aplique y vuelva a anular.
reason-target_not_rejected = Ese elemento no fue rechazado, así que no hay nada que confirmar.
    .next = Nada que hacer.
reason-unknown_operator = Esta tarjeta no está en la lista de operarios del centro.
    .next = Escanee su propia tarjeta o pida a un supervisor que le dé de alta.
reason-mode_not_allowed = Este terminal no puede hacer eso (su perfil).
    .next = Use un terminal que pueda; consulte a un supervisor sobre este terminal.
reason-read_only_mode = Buscar unidad nunca cambia nada en el centro.
    .next = Nada que hacer; confirme.
reason-unknown_bin = El centro no tiene ninguna ubicación con esta etiqueta.
    .next = Vuelva a escanear la etiqueta de la ubicación o pida a un supervisor que la dé de alta.
reason-unknown_unit = El centro no conoce este tag o número de serie.
    .next = Aparte la unidad y avise a un supervisor.
reason-unit_state = Esta unidad no se puede ubicar: está expedida o desaparecida.
    .next = Apártela y avise a un supervisor.
reason-grn_not_accepted = Esta recepción es desconocida o calidad no la ha aceptado.
    .next = Compruebe el número de recepción; consulte a calidad o a un supervisor.
reason-not_on_grn = El SKU de esta unidad no figura en la recepción.
    .next = Apártela; avise a un supervisor (recepción o entrega equivocada).
reason-excess_line = La línea de la recepción ya tiene todas las unidades que espera.
    .next = Aparte la unidad sobrante y avise a un supervisor.
reason-already_received = Esta unidad ya se recibió.
    .next = Apártela; puede ser un tag duplicado.
reason-count_not_open = El inventario está cerrado, aprobado o cancelado.
    .next = Elija un inventario abierto o pida a un supervisor que abra uno.
reason-manifest_not_ready = El manifiesto es desconocido o no está en preparación ni expedido.
    .next = Compruebe el número de manifiesto; consulte a un supervisor.
reason-not_on_manifest = Esta unidad no figura en el manifiesto.
    .next = No la cargue en el camión y avise a un supervisor.
reason-INVALID_ITEM = Al escaneo le falta algo que el centro necesita, o indica la recepción, el inventario o el manifiesto de otra sesión.
    .next = Descártelo y escanee de nuevo; avise a un supervisor si se repite.
reason-SESSION_CONFLICT = Este terminal u operario ya tiene otra sesión abierta en el centro.
    .next = Cierre la sesión en el otro terminal; si se perdió o se restableció, pida a un supervisor que cierre su sesión en la vista del centro (Dispositivos, Cerrar sesión). Después descarte esto y empiece de nuevo.
reason-SESSION_NOT_YOURS = La sesión pertenece a otro terminal.
    .next = Descártelo e inicie una sesión nueva.
reason-SEQ_ALREADY_USED = El centro ya tiene otro elemento en esta posición de la sesión.
    .next = Descártelo; vuelva a escanear si debe mantenerse.
reason-IDEMPOTENCY_KEY_REUSED = El centro tiene un elemento distinto con la misma clave.
    .next = Descártelo y escanee de nuevo.
reason-IDEMPOTENCY_RECEIPT_UNAVAILABLE = El centro no puede leer su respuesta para este elemento.
    .next = Avise a un supervisor; no lo vuelva a escanear hasta que lo indique.
reason-ALREADY_UNDONE = El escaneo ya estaba anulado.
    .next = Descártelo.
reason-UNIT_CONFLICT = El tag o número de serie pertenece a otra unidad en el centro.
    .next = Aparte la unidad y avise a un supervisor.
reason-CONSTRAINT_CONFLICT = El centro lo rechazó porque contradice lo que tiene registrado.
    .next = Descártelo; avise a un supervisor si se repite.
reason-http = El centro rechazó este escaneo tal como se envió.
    .next = Descártelo y escanee de nuevo; avise a un supervisor si se repite.
reason-waiting-behind = En espera detrás de un escaneo bloqueado de su sesión.
    .next = Decida sobre el escaneo bloqueado en la cola.
reason-other = El centro rechazó este escaneo.
    .next = Muéstreselo a un supervisor.

## En qué quedó cada escaneo

outcome-pending = guardando…
outcome-kept = guardado en este terminal
outcome-applied = aplicado
outcome-training = registrado como formación: no se movió nada
outcome-refused = rechazado
outcome-blocked = bloqueado: decida en la cola
outcome-voided = descartado
outcome-failed = no capturado
outcome-undone = anulado
outcome-held = guardado en este terminal, NO enviado: este terminal no está autorizado en el centro
outcome-refused-seq = Rechazado #{ $seq }: { $words }
undo = Anular
results-fewer = Mostrar solo los últimos
results-more = { $count ->
    [one] Mostrar { $count } escaneo anterior
   *[other] Mostrar { $count } escaneos anteriores
  }
late-refused = { $count ->
    [one] { $count } escaneo rechazado por el centro después de guardarse aquí.
   *[other] { $count } escaneos rechazados por el centro después de guardarse aquí.
  }
reason-words-next = { $words } { $next }
capture-not-open = La sesión aún no está abierta.
capture-to-bin = { $code } → { $bin }
capture-row = #{ $seq } { $code }
capture-row-note = #{ $seq } { $code } · { $note }
capture-kept = Guardado en este terminal #{ $seq }: { $code }
capture-kept-held = Guardado en este terminal #{ $seq }: { $code }, NO enviado: este terminal no está autorizado en el centro
capture-failed-row = { $code }: NO capturado ({ $error })
capture-failed = NO capturado { $code }: { $error }
undo-no-session = no hay ninguna sesión abierta donde registrar la anulación
undo-row = #{ $seq } anulación de { $code }
undo-done = Anulado: { $code } (guardado en este terminal; el centro lo aplica)
undo-failed = La anulación falló: { $error }
undo-nothing = Nada que anular: anular actúa sobre el último escaneo de esta sesión en { $seconds } s.
rescan-no-epc = el elemento no indica ningún EPC
rescan-no-session = abra una sesión de { $mode } para volver a escanear
rescan-row = #{ $seq } { $epc } escaneado de nuevo

## Filas de la cola

queue-open = abrir { $mode } { $context } · { $operator }
queue-undo = anular { $target }
command-open_session = Abrir sesión
command-scan = Escaneo
command-undo = Deshacer
command-void = Anulación
command-close_session = Cerrar sesión
command-acknowledge = Confirmación
queue-age = capturado hace { $age }
queue-discard = Descartar
queue-rescan = Volver a escanear
queue-state = { $state ->
    [queued] en cola
    [sending] enviando
    [done] hecho
    [rejected] rechazado
    [blocked] bloqueado
    [voided] descartado
    [training] formación
   *[other] { $state }
  }
queue-acknowledged = { $words } (confirmado)
queue-more-count = Más ({ $count } más)
queue-filter-decide-count = Por decidir ({ $count })
queue-nothing-to-decide = Nada espera una decisión.
queue-empty = La cola está vacía.
queue-counts = en cola { $queued } · enviando { $sending } · hechos { $done } · rechazados { $rejected } · bloqueados { $blocked } · descartados { $voided }
queue-nothing-waiting = Nada en espera.
queue-oldest = Más antiguo en espera: { $age }
queue-sending-now = Enviando ahora.
queue-next-try = Próximo intento a las { DATETIME($at, hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23") } (en { $in }), o en cuanto el centro vuelva a responder.
queue-action-done = { $action }: hecho ({ $label })
queue-action-failed = { $label }: { $error }
queue-sent = { $items } enviados en { $requests } petición(es)
queue-export = Exportar
queue-export-save = Guardar archivo
queue-export-share = Compartir
queue-export-writing = Escribiendo el archivo…
queue-export-failed = La exportación falló: { $error }
queue-export-share-failed = No se pudo compartir: { $error }
queue-export-nothing = Nada que exportar: todos los escaneos de este dispositivo han llegado al centro.
queue-export-done = { $items ->
    [one] { $items } elemento
   *[other] { $items } elementos
  } en { $name } ({ $size }). Siguen en la cola aquí y llegarán al centro si vuelve a responder.

## Configuración del terminal: lo que encontró la comprobación

setup-not-url = { $url } no es una URL: empieza por https:// e indica el host y el puerto del centro.
setup-not-web = { $url } no es una dirección web: empieza por https://.
setup-mixed = { $url } es http sin cifrar: esta página es https y no puede acceder a ella. Use la dirección https:// del centro.
setup-port-hint = El puerto HTTPS del centro es { $port } salvo que se haya cambiado: pruebe https://{ $host }:{ $port }.
setup-plain-port = El puerto { $port } de { $host } responde HTTP sin cifrar, no HTTPS: es el puerto sin cifrar del centro. Use la dirección HTTPS del centro (https://{ $host }:{ $https } salvo que se haya cambiado).
setup-certificate = Este terminal no confía en el certificado de { $origin }, o el puerto { $port } no es el puerto HTTPS del centro. Si el puerto es correcto, instale una vez la CA del centro: abra { $trust } (o pida a TI que la distribuya) y vuelva a guardar.
setup-unreachable = El centro no responde en { $origin }: nadie aceptó la conexión en el puerto { $port }. Compruebe la dirección y el puerto, que el centro esté en marcha y que este terminal esté en su red.
setup-cross-origin = { $origin } responde, pero esta página (de { $page }) no puede leerlo: abra el enlace de configuración en el propio centro.
setup-token = El centro rechazó el token del terminal (401): está mal escrito, o el terminal { $device } fue revocado o recibió un token nuevo. Pida a un supervisor un nuevo enlace de configuración ({ $command }) y ábralo.
setup-site-status = El centro respondió { $status } a la comprobación del token.
setup-other-device = Ese token es del terminal { $named }, no de { $device }: use el ID que el centro imprimió con él.
setup-checking = Comprobando { $url }…
setup-not-switched = Sin cambios: este terminal sigue como { $device } → { $site }.
setup-done = Configurado como { $device } → { $site }
setup-done-but = Configurado como { $device } → { $site }. { $why }
setup-not-yet = Aún sin configurar: los escaneos se guardan en este terminal hasta que lo esté.

## Una nueva versión de la aplicación

release-schema-newer = Captura detenida: este terminal guarda escaneos de una versión más nueva que la que sirve ahora el centro. No se pierde nada de la cola. Pida al centro que vuelva a servir la versión más nueva.
release-stopped = Captura detenida: la aplicación no arrancó ({ $code }: { $message }). No se pierde nada de la cola.
release-ready = Actualización lista: build { $build }. Recargue entre escaneos.
release-failed = La actualización { $build } no se instaló ({ $code }); este terminal sigue con la build { $running }.
release-updating = Actualizando la aplicación entre escaneos…

## Etiquetas impresas y codificadas en la impresora del puesto

printer-paper-out = sin papel
printer-head-open = cabezal abierto
printer-ribbon-out = sin cinta
printer-paused = en pausa
printer-offline = la impresora { $printer } está desconectada
printer-unreached = el centro no pudo contactar con la impresora { $printer } en su última visita
printer-faults = impresora { $printer }: { $faults }
label-waiting = Etiqueta: se pedirá a la impresora del puesto cuando el centro tenga este escaneo
label-waits = La etiqueta espera: { $trouble }. Se imprime una sola vez, cuando vuelva la impresora; no hay ENCODE hasta que el tag se relea.
label-queued = Etiqueta en cola en { $printer }.
label-printing = Imprimiendo y codificando en { $printer }…
label-printed = Tag escrito y releído en { $printer }: ENCODE registrado.
label-void = Tag nulo en { $printer }: no se releyó nada, así que no hay ENCODE. Aparte la etiqueta: un supervisor decide en la vista del centro (reimprimir o descartar).
label-read-wrong = Tag releído con error en { $printer }: se escribió { $wrote }, se leyó { $read }; sin ENCODE. Aparte la etiqueta: un supervisor decide en la vista del centro (reimprimir o descartar).
label-read-other = Tag releído con error en { $printer }: se escribió { $wrote }, se leyó otra cosa; sin ENCODE. Aparte la etiqueta: un supervisor decide en la vista del centro (reimprimir o descartar).
label-in-doubt = { $printer } no respondió por esta etiqueta: puede que se haya impreso, y no hay ENCODE registrado. Un supervisor decide en la vista del centro (reimprimir o descartar).
label-dismissed = Etiqueta descartada en la vista del centro: sin ENCODE registrado.
label-state = Etiqueta en { $printer }: { $state }.
station-unread = Impresora del puesto: aún sin leer (el centro no ha respondido).
station-none = Este puesto no tiene impresora asignada: este terminal escribe los tags él mismo.
station-trouble = Las etiquetas se imprimen y codifican en { $printer }, pero { $trouble }: las etiquetas esperan allí y se imprimen cuando vuelva.
station-ready = Las etiquetas se imprimen y codifican en { $printer }: cada tag se relee antes de registrar su ENCODE.

## Valores del libro de existencias, como los muestran las pantallas

unit-state-new = nuevo
unit-state-in_stock = en stock
unit-state-dispatched = expedido
unit-state-missing = falta

grn-state-open = abierta
grn-state-needs_resolution = pendiente de resolver
grn-state-complete = completa

grn-qc-accepted = aceptada
grn-qc-held = retenida
grn-qc-rejected = rechazada

manifest-state-draft = en borrador
manifest-state-packing = en preparación
manifest-state-dispatched = expedido
manifest-state-verified = verificado

count-state-open = abierto
count-state-closed = cerrado
count-state-approved = aprobado
count-state-cancelled = cancelado
