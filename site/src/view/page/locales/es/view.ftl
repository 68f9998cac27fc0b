# La vista del centro (site/src/view/page) en español. Términos: GLOSSARY.md.
# Los valores de los mensajes ($device, $bin, $epc…) son códigos y no se traducen.

## La página

page-title = Stockhop · centro
page-heading = Stockhop centro
figure-queue-depth = Cola
figure-sync-latency = Latencia de sincronización (mediana)
commands-link = Códigos de barras de comandos
language-label = Idioma
sign-out = Cerrar sesión
updated = actualizado { $time } ({ $zone })
not-updated = sin actualizar: { $error }
never = nunca
action-failed = Error: { $error }

## Evolución de la cola

trend-draining = Se vacía con normalidad
trend-growing = Creciendo
trend-escalated = Escalado
trend-none = Sin estado aún

## Horas y duraciones

stamp-day-time = { $day } { $time }
age-minutes = { $minutes } min
age-hours = { $hours } h { $minutes } min
latency-ms = { $ms } ms
latency-seconds = { $seconds } s
latency-minutes = { $minutes } min { $seconds } s

## Acceso

sign-in-heading = Iniciar sesión
sign-in-token = Token de administrador, de
sign-in-button = Iniciar sesión
sign-in-refused = Ese no es un token de administrador.

## Avisos

alerts-region =
    .aria-label = Dispositivos sin conexión
storage-full = El centro se ha quedado sin almacenamiento: los terminales conservan sus escaneos y los reenvían en cuanto haya espacio
device-offline-since = { $device } ({ $form }) sin conexión desde { $time }
printer-fault = { $printer } (impresora): { $fault }
rejecting-label = Dispositivo con muchos rechazos
rejecting-count =
    { $count ->
        [one] { $count } rechazo en los últimos { $minutes } min, { $rate } por minuto
       *[other] { $count } rechazos en los últimos { $minutes } min, { $rate } por minuto
    }
rejecting-reason = sobre todo: { $reason }
rejecting-no-reason = sin motivo indicado
rejecting-latest = el último a las { $time }

## Perfiles de dispositivo

form-fxr90 = arco fijo
form-mc3390xr = terminal
form-rfd40 = lector de mano
form-zt411r = impresora

## Vista de empresa (los centros de una central)

sites-heading = Centros
sites-all = ← Todos los centros
site-own-view = Abrir la vista propia del centro
fact-last-contact = Último contacto
fact-status = Estado
fact-status-not-sent = aún no enviado (el centro usa una versión anterior)
fact-none = ninguno
fact-queue-depth = Cola
fact-oldest-item = Elemento más antiguo
fact-oldest-since = { $age } (desde { $time })
fact-none-waiting = nada en espera
fact-devices-offline = Dispositivos sin conexión
fact-outbox = Bandeja de salida
fact-outbox-sent = enviado
fact-outbox-waiting = { $count } en espera, { $lag } de retraso
fact-status-taken = Estado tomado
fact-hops-received = Movimientos recibidos
fact-restored = Restaurado desde una copia
fact-restored-at = { $time } (época { $epoch }, sus movimientos siguen tras el #{ $after })
fact-first-contact = Primer contacto
contact-silent = sin noticias desde hace { $age } ({ $time })
contact-ago = hace { $age } ({ $time })

## Gráfico

chart-heading = Cola sin conexión y latencia de sincronización · 12 h
chart-queue-depth = cola
chart-sync-latency = latencia de sincronización (mediana)
chart-sync-latency-axis = latencia de sincronización, mediana (s)
chart-site-time = hora del centro ({ $zone })
chart-image =
    .alt = Cola del centro y mediana de la latencia de sincronización cada 5 minutos en las últimas 12 horas

## Dispositivos

devices-heading = Dispositivos
devices-device = Dispositivo
devices-profile = Perfil
devices-online = Conexión
devices-last-seen = Visto por última vez
devices-depth = Cola
devices-oldest = Más antiguo
devices-session = Sesión
devices-revoke = Revocar
device-online = conectado
device-offline = sin conexión ({ $alert })
device-not-heard = aún sin noticias
device-simulation = (formación)
device-rejecting = muchos rechazos
commission = Poner en servicio
commission-confirm = ¿Registrar de verdad los escaneos de { $device }?
revoke = Revocar
revoke-confirm = ¿Revocar { $device }?
close-session = Cerrar sesión
close-session-confirm = ¿Cerrar la sesión de { $device }?
session-open = { $operator } · { $mode }
session-since = { $operator } · { $mode } desde { $time }

## Modos

mode-receive = recepción
mode-put-away = ubicar
mode-cycle-count = inventario cíclico
mode-dispatch-verify = verificar expedición
mode-find-unit = buscar unidad

## Añadir un dispositivo

enroll-summary = Añadir un dispositivo
enroll-device-id = Id. del dispositivo
enroll-profile = Perfil
profile-option-mc3390xr = mc3390xr (terminal)
profile-option-rfd40 = rfd40 (lector de mano)
profile-option-fxr90 = fxr90 (arco fijo)
profile-option-zt411r = zt411r (impresora)
enroll-commissioned = En servicio (registra de verdad)
enroll-add = Añadir
enroll-qr =
    .alt = Enlace de configuración como código QR
enroll-scan = Escanéelo con el terminal en su campo de configuración:

## Colas rescatadas

rescues-heading = Colas rescatadas
stranded-none = Ningún dispositivo revocado dejó escaneos pendientes.
stranded-device = Dispositivo revocado
stranded-revoked = Revocado
stranded-queued = En cola entonces
stranded-file = Archivo de rescate
stranded-imported = importado { $time }
stranded-not-imported = sin importar: importe su archivo ({ $command })
rescues-device = Dispositivo
rescues-imported = Importado
rescues-applied = Aplicados
rescues-replayed = Ya en el centro
rescues-refused = Rechazados

## Impresoras

printers-heading = Impresoras
printers-printer = Impresora
printers-address = Dirección
printers-status = Estado
printers-last-status = Último estado
printers-jobs = Trabajos en espera
printer-ready = lista
printer-not-answering = no responde: { $error }
fault-paper-out = sin papel
fault-head-open = cabezal abierto
fault-ribbon-out = sin cinta
fault-paused = en pausa
printer-summary = Añadir una impresora
printer-id = Id. de la impresora
printer-address = Dirección
printer-profile = Perfil
printer-option-zt411r = zt411r (impresora de etiquetas RFID)
printer-stations = Puestos: terminales que reciben con codificación aquí
printer-add = Añadir

## Versiones

builds-heading = Versiones
builds-served = Servida
builds-schema = esquema
build-devices =
    { $count ->
        [one] { $count } dispositivo
       *[other] { $count } dispositivos
    }
build-served = servida
build-old = versión antigua
builds-none = Ningún terminal ha informado de su versión.
device-old-build = versión antigua { $build }
device-build = versión { $build }
device-not-capturing = no captura: { $problem }
device-capturing = captura
builds-all-served = Todos los terminales usan la versión servida.

## Terminales de fichaje y receptor

terminals-heading = Terminales de fichaje
terminals-none = Ningún terminal ha informado.
terminal-seen = visto { $time }
backfill-form =
    .aria-label = Volver a pedir sus registros a un terminal
backfill-intro = Volver a pedir sus registros a un terminal iclock (tras una caída), horas en la zona de este navegador:
backfill-serial = Número de serie
backfill-from = Desde
backfill-to = Hasta
backfill-button = Recuperar
backfill-commands =
    .aria-label = Los comandos del terminal
backfill-queued = El comando #{ $command } espera la próxima consulta de { $serial }.
backfill-return = retorno { $code }
listener-heading = Receptor
listener-queue = Cola
listener-set-aside = apartados
listener-dead-letters = no entregables
listener-set-aside-list =
    .aria-label = Registros de terminal apartados
set-aside-attempts =
    { $attempts ->
        [one] { $attempts } intento, último { $time }: { $error }
       *[other] { $attempts } intentos, último { $time }: { $error }
    }
set-aside-next = próximo intento { $time }
set-aside-none = Nada apartado.
dead-letters-none = Nada sin entregar.

## Central

central-heading = Central
outbox-forwarding = Reenviando como
outbox-to = a
outbox-outbox = bandeja de salida
outbox-oldest = más antiguo
outbox-dead-letters = no entregables
outbox-off = (reenvío desactivado)
outbox-failed = La última entrega falló hace { $age }: { $error }
central-site = Centro
central-first-seen = Visto por primera vez
central-last-seen = Visto por última vez
central-hops = Movimientos recibidos
central-last-seq = Última sec.

## Decisiones

decisions-heading = Decisiones
decisions-counts = Diferencias de inventario por aprobar
decisions-grns = Recepciones por resolver
decisions-corrections = Correcciones
decisions-print-jobs = Trabajos de impresión
decisions-log = Registro de decisiones
counts-none = No hay diferencias de inventario pendientes.
grns-none = No hay recepciones pendientes.
corrections-none = Nada que corregir.
corrections-count = ({ $count })
corrections-more = ({ $shown } mostrados, los más recientes; { $more } escaneos rechazados más en espera)
kind-count-variance = Diferencia de inventario
kind-grn-resolution = Recepción por resolver
kind-rejected-item = Rechazado en el terminal
kind-late-undo = Anulación no realizada
kind-late-undo-expired = anulación pasados { $seconds } s
kind-late-undo-refused = anulación que el terminal no puede hacer
kind-terminal-failed = Registro de terminal rechazado
context-device = dispositivo { $device }
context-operator = operario { $operator }
context-epc = EPC { $epc }
context-bin = ubicación { $bin }
context-grn = recepción { $grn }
context-manifest = manifiesto { $manifest }
context-count = inventario { $count }
context-captured = capturado { $time }
context-recorded = registrado { $time }
variance-missing = Faltan:
variance-unexpected = Inesperados:
grn-line = { $sku }: { $received } de { $expected } recibidos
grn-line-short = , faltan { $units }
grn-line-over = , sobran { $units }
grn-line-tags = { " · " }tags { $tags }
grn-line-no-tags = { " · " }sin tags
decision-note = Nota para { $decision }
    .placeholder = Nota (motivo)
why = Motivo: { $words }
choice = { $action }: { $words }

## Las palabras de una decisión (summary_id, reason_words_id, dismiss_id y
## correct_id del banco de trabajo, con sus args)

decision-count = Inventario { $count } de { $location } / { $zone }: { $missing } faltantes, { $unexpected } inesperadas
decision-count-bin = Inventario { $count } de la ubicación { $bin } en { $location } / { $zone }: { $missing } faltantes, { $unexpected } inesperadas
decision-count-matches = el inventario encontró cada unidad esperada y nada más
decision-count-differs = el inventario difiere del stock que el sitio esperaba en la zona
decision-count-dismiss = el stock queda como está: el inventario sigue sin aprobar y no registra nada.
decision-count-correct = { $missing ->
        [one] una unidad faltante pasa a faltante
       *[other] { $missing } unidades faltantes pasan a faltantes
    }, { $unexpected ->
        [one] una unidad inesperada pasa a la ubicación donde se contó
       *[other] { $unexpected } unidades inesperadas pasan a la ubicación donde se contaron
    } (movimientos ADJUST).
decision-grn = Recepción { $grn }: { $short } de menos, { $excess } de más, en { $lines ->
        [one] una línea
       *[other] { $lines } líneas
    }
decision-grn-why = la recepción se cerró con líneas que no recibieron lo esperado
decision-grn-dismiss = la recepción queda completa tal como se recibió: cada línea corta o excedida se registra como un movimiento ADJUST con su artículo y cantidad.
decision-late-undo = No se pudo hacer la anulación n.º { $seq } de { $unit } ({ $mode }) en { $device }.
decision-late-undo-dismiss = el escaneo queda como se registró.
decision-late-undo-receive = se revierte la recepción: { $unit } sale de su línea de recepción.
decision-late-undo-dispatch = se revierte la expedición: { $unit } vuelve a su ubicación y queda sin verificar en el manifiesto.
decision-late-undo-count = se revierte el escaneo del inventario: { $unit } deja de estar contada.
decision-late-undo-put-away = se revierte la ubicación: { $unit } vuelve a donde estaba.
decision-item = Se rechazó { $command ->
        [scan] el escaneo
        [undo] la anulación
       *[other] { $command }
    } n.º { $seq } ({ $unit }, { $mode }) en { $device }.
decision-item-dismiss = el rechazo se mantiene y no se registra nada.
decision-item-correct = { $unit } queda en stock en la ubicación { $bin } (un movimiento ADJUST).
decision-terminal = El registro ({ $kind }) de { $subject } del terminal { $terminal } fue rechazado por el libro de stock (HTTP { $status })
decision-terminal-unanswered = El registro ({ $kind }) de { $subject } del terminal { $terminal } fue rechazado por el libro de stock (sin respuesta)
decision-terminal-why = el libro de stock lo rechazó definitivamente (HTTP { $status }): { $answer }
decision-terminal-why-unanswered = el libro de stock lo rechazó definitivamente (sin respuesta): { $answer }
decision-terminal-dismiss = el registro sigue rechazado.
decision-terminal-correct = el registro vuelve a enviarse al libro de stock (una vez corregido lo que lo rechazó, p. ej. el terminal puesto en servicio).

## Registros y orígenes de un terminal

record-kind-attendance = fichaje
record-kind-tag-read = lectura de tag
record-kind-code-read = lectura de código
terminal-source-iclock = terminal de fichaje (iclock)
terminal-source-zebra = lector RFID (Zebra)
terminal-source-framed = lector (framed)
confirm-action = ¿{ $action }?
correct = Corregir
dismiss = Descartar
correct-count-variance = Aprobar diferencia
correct-grn-resolution = Registrar las líneas
correct-late-undo = Anular el escaneo
correct-rejected-item = Confirmar el escaneo
correct-terminal-failed = Enviar de nuevo
dismiss-grn-resolution = Aceptar como recibido
settled-dismiss = Descartado
settled-correct = Corregido
settled-acknowledge = Confirmado en el terminal
settled-rescan = Reescaneado en el terminal
settled-by = por { $admin } a las { $time }
settled-note = «{ $note }»
settled-no-note = sin nota
settled-hops = movimientos { $hops }
settled-no-hops = sin movimientos
settled-none = Nada decidido aún.

## Trabajos de impresión

print-read-back-mismatch = tag releído con error
print-void-tag = tag anulado
print-no-answer = la impresora no responde
print-interrupted = interrumpido al enviar
print-job = { $label } { $subject } en { $printer }
print-read = leído { $tag }
reprint = Reimprimir
reprint-confirm = Confirmar reimpresión
dismiss-confirm = Confirmar descarte
print-jobs-none = No hay trabajos de impresión en espera.

## Por qué el centro rechazó un escaneo: sus palabras y el siguiente paso (.next).

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
