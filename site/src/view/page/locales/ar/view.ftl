# واجهة المستودع (site/src/view/page) بالعربية. المصطلحات: GLOSSARY.md.
# القيم داخل الرسائل ($device و$bin و$epc…) رموز تبقى كما هي، معزولة من اليسار إلى اليمين.

## الصفحة

page-title = Stockhop · المستودع
page-heading = Stockhop المستودع
figure-queue-depth = قائمة الانتظار
figure-sync-latency = وسيط زمن المزامنة
commands-link = باركود الأوامر
language-label = اللغة
sign-out = تسجيل الخروج
updated = حُدّث { $time } ({ $zone })
not-updated = لم يُحدَّث: { $error }
never = أبداً
action-failed = تعذّر: { $error }

## اتجاه قائمة الانتظار

trend-draining = تتناقص بشكل طبيعي
trend-growing = تتزايد
trend-escalated = مُصعَّدة
trend-none = لا حالة بعد

## الأوقات والمدد

stamp-day-time = { $day } { $time }
age-minutes = { $minutes } د
age-hours = { $hours } س { $minutes } د
latency-ms = { $ms } ملّي ث
latency-seconds = { $seconds } ث
latency-minutes = { $minutes } د { $seconds } ث

## تسجيل الدخول

sign-in-heading = تسجيل الدخول
sign-in-token = رمز المسؤول، من الأمر
sign-in-button = دخول
sign-in-refused = هذا ليس رمز مسؤول.

## التنبيهات

alerts-region =
    .aria-label = أجهزة غير متصلة
storage-full = نفدت مساحة التخزين في المستودع: تحتفظ الأجهزة بعمليات المسح وتعيد إرسالها حين تتوفر المساحة
device-offline-since = { $device } ({ $form }) غير متصل منذ { $time }
printer-fault = { $printer } (طابعة): { $fault }
rejecting-label = جهاز كثير الرفض
rejecting-count =
    { $count ->
        [zero] لا حالات رفض في آخر { $minutes } د
        [one] حالة رفض واحدة في آخر { $minutes } د، { $rate } في الدقيقة
        [two] حالتا رفض في آخر { $minutes } د، { $rate } في الدقيقة
        [few] { $count } حالات رفض في آخر { $minutes } د، { $rate } في الدقيقة
       *[other] { $count } حالة رفض في آخر { $minutes } د، { $rate } في الدقيقة
    }
rejecting-reason = غالبًا: { $reason }
rejecting-no-reason = دون ذكر السبب
rejecting-latest = آخرها { $time }

## أنواع الأجهزة

form-fxr90 = بوابة ثابتة
form-mc3390xr = جهاز محمول
form-rfd40 = قارئ ملحق
form-zt411r = طابعة

## واجهة الشركة (مستودعات المركز)

sites-heading = المستودعات
sites-all = → كل المستودعات
site-own-view = افتح واجهة المستودع نفسه
fact-last-contact = آخر اتصال
fact-status = الحالة
fact-status-not-sent = لم تُرسل بعد (يعمل المستودع بإصدار أقدم)
fact-none = لا شيء
fact-queue-depth = قائمة الانتظار
fact-oldest-item = أقدم عنصر
fact-oldest-since = { $age } (منذ { $time })
fact-none-waiting = لا شيء ينتظر
fact-devices-offline = أجهزة غير متصلة
fact-outbox = صندوق الصادر
fact-outbox-sent = أُرسل
fact-outbox-waiting = { $count } ينتظر، متأخر { $lag }
fact-status-taken = وقت الحالة
fact-hops-received = الحركات المستلمة
fact-restored = استُعيد من نسخة احتياطية
fact-restored-at = { $time } (الحقبة { $epoch }، تستمر حركاته بعد #{ $after })
fact-first-contact = أول اتصال
contact-silent = صامت منذ { $age } ({ $time })
contact-ago = قبل { $age } ({ $time })

## الرسم البياني

chart-heading = قائمة الانتظار دون اتصال وزمن المزامنة · 12 ساعة
chart-queue-depth = قائمة الانتظار
chart-sync-latency = وسيط زمن المزامنة
chart-sync-latency-axis = وسيط زمن المزامنة (ث)
chart-site-time = توقيت المستودع ({ $zone })
chart-image =
    .alt = قائمة انتظار المستودع ووسيط زمن المزامنة لكل 5 دقائق خلال آخر 12 ساعة

## الأجهزة

devices-heading = الأجهزة
devices-device = الجهاز
devices-profile = النوع
devices-online = الاتصال
devices-last-seen = آخر ظهور
devices-depth = الانتظار
devices-oldest = الأقدم
devices-session = الجلسة
devices-revoke = إبطال
device-online = متصل
device-offline = غير متصل ({ $alert })
device-not-heard = لم يتصل بعد
device-simulation = (تدريب)
device-rejecting = كثير الرفض
commission = تشغيل فعلي
commission-confirm = تسجيل عمليات مسح { $device } فعلياً؟
revoke = إبطال
revoke-confirm = إبطال { $device }؟
close-session = إغلاق الجلسة
close-session-confirm = إغلاق جلسة { $device }؟
session-open = { $operator } · { $mode }
session-since = { $operator } · { $mode } منذ { $time }

## الأوضاع

mode-receive = الاستلام
mode-put-away = التخزين
mode-cycle-count = الجرد الدوري
mode-dispatch-verify = التحقق من الشحن
mode-find-unit = البحث عن وحدة

## إضافة جهاز

enroll-summary = إضافة جهاز
enroll-device-id = معرّف الجهاز
enroll-profile = النوع
profile-option-mc3390xr = mc3390xr (جهاز محمول)
profile-option-rfd40 = rfd40 (قارئ ملحق)
profile-option-fxr90 = fxr90 (بوابة ثابتة)
profile-option-zt411r = zt411r (طابعة)
enroll-commissioned = تشغيل فعلي (يسجّل فعلياً)
enroll-add = إضافة
enroll-qr =
    .alt = رابط الإعداد كرمز QR
enroll-scan = امسحه بالجهاز في حقل الإعداد:

## قوائم الانتظار المُنقَذة

rescues-heading = قوائم الانتظار المُنقَذة
stranded-none = لم يترك أي جهاز مُبطَل عمليات مسح خلفه.
stranded-device = الجهاز المُبطَل
stranded-revoked = أُبطل
stranded-queued = المنتظر حينها
stranded-file = ملف الإنقاذ
stranded-imported = استُورد { $time }
stranded-not-imported = لم يُستورد: استورد ملفه ({ $command })
rescues-device = الجهاز
rescues-imported = استُورد
rescues-applied = مُطبّق
rescues-replayed = موجود في المستودع
rescues-refused = مرفوض

## الطابعات

printers-heading = الطابعات
printers-printer = الطابعة
printers-address = العنوان
printers-status = الحالة
printers-last-status = آخر حالة
printers-jobs = مهام منتظرة
printer-ready = جاهزة
printer-not-answering = لا تستجيب: { $error }
fault-paper-out = نفد الورق
fault-head-open = رأس الطباعة مفتوح
fault-ribbon-out = نفد الشريط
fault-paused = متوقفة مؤقتاً
printer-summary = إضافة طابعة
printer-id = معرّف الطابعة
printer-address = العنوان
printer-profile = النوع
printer-option-zt411r = zt411r (طابعة ملصقات RFID)
printer-stations = المحطات: الأجهزة التي تستلم مع الترميز هنا
printer-add = إضافة

## الإصدارات

builds-heading = الإصدارات
builds-served = المُقدَّم
builds-schema = المخطط
build-devices =
    { $count ->
        [zero] لا أجهزة
        [one] جهاز واحد
        [two] جهازان
        [few] { $count } أجهزة
       *[other] { $count } جهاز
    }
build-served = مُقدَّم
build-old = إصدار قديم
builds-none = لم يُبلغ أي جهاز عن إصداره.
device-old-build = إصدار قديم { $build }
device-build = الإصدار { $build }
device-not-capturing = لا يلتقط: { $problem }
device-capturing = يلتقط
builds-all-served = كل الأجهزة تعمل بالإصدار المُقدَّم.

## أجهزة الحضور والمستقبِل

terminals-heading = أجهزة الحضور
terminals-none = لم يُبلغ أي جهاز حضور.
terminal-seen = شوهد { $time }
backfill-form =
    .aria-label = اطلب من جهاز حضور سجلاته مرة أخرى
backfill-intro = اطلب من جهاز iclock سجلاته مرة أخرى (بعد انقطاع)، بالأوقات في منطقة هذا المتصفح الزمنية:
backfill-serial = الرقم التسلسلي
backfill-from = من
backfill-to = إلى
backfill-button = استرجاع
backfill-commands =
    .aria-label = أوامر الجهاز
backfill-queued = الأمر #{ $command } ينتظر الاستعلام التالي من { $serial }.
backfill-return = النتيجة { $code }
listener-heading = المستقبِل
listener-queue = قائمة الانتظار
listener-set-aside = مُنحّاة
listener-dead-letters = غير قابلة للتسليم
listener-set-aside-list =
    .aria-label = سجلات أجهزة الحضور المُنحّاة
set-aside-attempts =
    { $attempts ->
        [one] محاولة واحدة، آخرها { $time }: { $error }
        [two] محاولتان، آخرها { $time }: { $error }
        [few] { $attempts } محاولات، آخرها { $time }: { $error }
       *[other] { $attempts } محاولة، آخرها { $time }: { $error }
    }
set-aside-next = المحاولة التالية { $time }
set-aside-none = لا شيء مُنحّى.
dead-letters-none = لا رسائل غير مُسلَّمة.

## المركز

central-heading = المركز
outbox-forwarding = يُعيد التوجيه باسم
outbox-to = إلى
outbox-outbox = صندوق الصادر
outbox-oldest = الأقدم
outbox-dead-letters = غير قابلة للتسليم
outbox-off = (إعادة التوجيه متوقفة)
outbox-failed = فشل آخر تسليم قبل { $age }: { $error }
central-site = المستودع
central-first-seen = أول ظهور
central-last-seen = آخر ظهور
central-hops = الحركات المستلمة
central-last-seq = آخر تسلسل

## القرارات

decisions-heading = القرارات
decisions-counts = فروقات جرد بانتظار الموافقة
decisions-grns = أذون استلام بانتظار الحل
decisions-corrections = التصحيحات
decisions-print-jobs = مهام الطباعة
decisions-log = سجل القرارات
counts-none = لا فروقات جرد بانتظار قرار.
grns-none = لا أذون استلام بانتظار قرار.
corrections-none = لا شيء للتصحيح.
corrections-count = ({ $count })
corrections-more = (يُعرض { $shown }، الأحدث؛ و{ $more } عمليات مرفوضة أخرى تنتظر)
kind-count-variance = فرق جرد
kind-grn-resolution = إذن استلام بانتظار الحل
kind-rejected-item = مرفوض على الجهاز
kind-late-undo = إلغاء لم يُنفَّذ
kind-late-undo-expired = إلغاء بعد أكثر من { $seconds } ث
kind-late-undo-refused = إلغاء لا يستطيع الجهاز تنفيذه
kind-terminal-failed = سجل جهاز حضور مرفوض
context-device = الجهاز { $device }
context-operator = المشغّل { $operator }
context-epc = EPC { $epc }
context-bin = الموقع { $bin }
context-grn = إذن الاستلام { $grn }
context-manifest = بيان الشحن { $manifest }
context-count = الجرد { $count }
context-captured = التُقط { $time }
context-recorded = سُجّل { $time }
variance-missing = مفقود:
variance-unexpected = غير متوقع:
grn-line = { $sku }: استُلم { $received } من { $expected }
grn-line-short = ، ناقص { $units }
grn-line-over = ، زائد { $units }
grn-line-tags = { " · " }الوسوم { $tags }
grn-line-no-tags = { " · " }بلا وسوم
decision-note = ملاحظة على { $decision }
    .placeholder = ملاحظة (السبب)
why = السبب: { $words }
choice = { $action }: { $words }

## كلمات القرار (summary_id وreason_words_id وdismiss_id وcorrect_id
## في منضدة القرارات، مع args)

decision-count = الجرد { $count } في { $location } / { $zone }: { $missing } مفقودة، { $unexpected } غير متوقعة
decision-count-bin = الجرد { $count } للموقع { $bin } في { $location } / { $zone }: { $missing } مفقودة، { $unexpected } غير متوقعة
decision-count-matches = وجد الجرد كل وحدة متوقعة ولا شيء غيرها
decision-count-differs = يختلف الجرد عن المخزون الذي توقعه الموقع في المنطقة
decision-count-dismiss = يبقى المخزون كما هو: يبقى الجرد دون اعتماد ولا يقيّد شيئًا.
decision-count-correct = { $missing ->
        [one] تُسجَّل وحدة مفقودة واحدة كمفقودة
       *[other] تُسجَّل { $missing } وحدات مفقودة كمفقودة
    }، { $unexpected ->
        [one] وتُنقل وحدة غير متوقعة واحدة إلى الموقع الذي جُردت فيه
       *[other] وتُنقل { $unexpected } وحدات غير متوقعة إلى الموقع الذي جُردت فيه
    } (حركات ADJUST).
decision-grn = إذن الاستلام { $grn }: نقص { $short }، زيادة { $excess }، في { $lines ->
        [one] بند واحد
       *[other] { $lines } بنود
    }
decision-grn-why = أُغلق إذن الاستلام ببنود لم تستلم ما هو متوقع
decision-grn-dismiss = يُعد إذن الاستلام مكتملًا كما استُلم: يُقيَّد كل بند ناقص أو زائد كحركة ADJUST بصنفه وكميته.
decision-late-undo = تعذّر الإلغاء رقم { $seq } عن { $unit } ({ $mode }) على { $device }.
decision-late-undo-dismiss = يبقى المسح كما سُجّل.
decision-late-undo-receive = يُعكس الاستلام: تخرج { $unit } من بند الاستلام.
decision-late-undo-dispatch = يُعكس الشحن: تعود { $unit } إلى موقعها وتصبح غير متحقق منها في بيان الشحن.
decision-late-undo-count = يُعكس مسح الجرد: لم تعد { $unit } محسوبة.
decision-late-undo-put-away = يُعكس التخزين: تعود { $unit } إلى حيث كانت.
decision-item = رُفض { $command ->
        [scan] المسح
        [undo] الإلغاء
       *[other] { $command }
    } رقم { $seq } ({ $unit }، { $mode }) على { $device }.
decision-item-dismiss = يبقى الرفض ولا يُقيَّد شيء.
decision-item-correct = { $unit } في المخزون في الموقع { $bin } (حركة ADJUST).
decision-terminal = رفض دفتر المخزون سجل ({ $kind }) لـ { $subject } من الجهاز { $terminal } (HTTP { $status })
decision-terminal-unanswered = رفض دفتر المخزون سجل ({ $kind }) لـ { $subject } من الجهاز { $terminal } (بلا رد)
decision-terminal-why = رفضه دفتر المخزون نهائيًا (HTTP { $status }): { $answer }
decision-terminal-why-unanswered = رفضه دفتر المخزون نهائيًا (بلا رد): { $answer }
decision-terminal-dismiss = يبقى السجل مرفوضًا.
decision-terminal-correct = يُرسل السجل إلى دفتر المخزون مرة أخرى (بعد إصلاح سبب رفضه، مثل تشغيل الجهاز).

## سجلات الجهاز ومصادره

record-kind-attendance = حضور
record-kind-tag-read = قراءة وسم
record-kind-code-read = قراءة رمز
terminal-source-iclock = جهاز حضور (iclock)
terminal-source-zebra = قارئ RFID من Zebra
terminal-source-framed = قارئ (framed)
confirm-action = { $action }؟
correct = تصحيح
dismiss = تجاهل
correct-count-variance = اعتماد الفرق
correct-grn-resolution = ترحيل البنود
correct-late-undo = عكس المسح
correct-rejected-item = تأكيد المسح
correct-terminal-failed = إرسال مجدداً
dismiss-grn-resolution = القبول كما استُلم
settled-dismiss = تُجوهل
settled-correct = صُحّح
settled-acknowledge = أُكّد على الجهاز
settled-rescan = أُعيد مسحه على الجهاز
settled-by = بواسطة { $admin } في { $time }
settled-note = «{ $note }»
settled-no-note = بلا ملاحظة
settled-hops = الحركات { $hops }
settled-no-hops = بلا حركات
settled-none = لم يُحسم شيء بعد.

## مهام الطباعة

print-read-back-mismatch = قُرئ الوسم بشكل خاطئ
print-void-tag = الوسم باطل
print-no-answer = لا رد من الطابعة
print-interrupted = انقطع أثناء الإرسال
print-job = { $label } { $subject } على { $printer }
print-read = قُرئ { $tag }
reprint = إعادة الطباعة
reprint-confirm = تأكيد إعادة الطباعة
dismiss-confirm = تأكيد التجاهل
print-jobs-none = لا مهام طباعة تنتظر.

## لماذا رفض المستودع عملية المسح: الكلمات والخطوة التالية (.next).

reason-stale_state = تغيّرت الوحدة في المستودع بعد آخر قراءة لها على هذا الجهاز.
    .next = أعد مسحها (يقرأ الجهاز الوحدة من جديد أولًا)، أو أكّد.
reason-session_not_open = لم تُفتح جلسة هذا المسح في المستودع قط.
    .next = انظر إلى أول عنصر في الجلسة (سبب رفضه)، ثم ابدأ جلسة جديدة.
reason-session_already_opened = كانت هذه الجلسة مفتوحة من قبل.
    .next = لا شيء مطلوب؛ أكّد.
reason-session_already_closed = كانت هذه الجلسة مغلقة من قبل.
    .next = لا شيء مطلوب؛ أكّد.
reason-session_closed = أغلق المشرف هذه الجلسة في المستودع قبل إجراء هذا المسح.
    .next = امسح بطاقتك لبدء جلسة جديدة، ثم امسحه مرة أخرى.
reason-undo_window_expired = جاء الإلغاء بعد أكثر من دقيقتين من المسح.
    .next = اطلب من المشرف تصحيحه (إنه على قائمته).
reason-unknown_target = لم يتلقَّ المستودع قط المسح الذي يشير إليه هذا الإلغاء.
    .next = أكّد؛ وتحقق من المسح نفسه في قائمة الانتظار.
reason-cannot_undo_an_undo = لا يمكن إلغاء عملية إلغاء.
    .next = امسح الصنف مرة أخرى إذا كان يجب أن يبقى.
reason-target_rejected = رُفض المسح، فلا شيء لإلغائه.
    .next = أكّد.
reason-target_not_undoable = لم يغيّر ذلك المسح شيئًا يمكن إلغاؤه.
    .next = أكّد؛ واسأل المشرف إذا كان يجب تغيير شيء.
reason-target_not_applied = لم يُطبَّق المسح بعد.
    .next = انتظر حتى يُطبَّق، ثم ألغِه مرة أخرى.
reason-target_not_rejected = لم يُرفض ذلك العنصر، فلا شيء لتأكيده.
    .next = لا شيء مطلوب.
reason-unknown_operator = هذه البطاقة ليست في قائمة مشغّلي المستودع.
    .next = امسح بطاقتك أنت، أو اطلب من المشرف إضافتك.
reason-mode_not_allowed = لا يستطيع هذا الجهاز فعل ذلك (ملفه التعريفي).
    .next = استخدم جهازًا يستطيع؛ واسأل المشرف عن هذا الجهاز.
reason-read_only_mode = البحث عن وحدة لا يغيّر شيئًا في المستودع أبدًا.
    .next = لا شيء مطلوب؛ أكّد.
reason-unknown_bin = لا يوجد في المستودع موقع بهذا الملصق.
    .next = امسح ملصق الموقع مرة أخرى، أو اطلب من المشرف إضافة الموقع.
reason-unknown_unit = لا يعرف المستودع هذا الوسم أو الرقم التسلسلي.
    .next = ضع الوحدة جانبًا وأبلغ المشرف.
reason-unit_state = لا يمكن تخزين هذه الوحدة: إنها مشحونة أو مفقودة.
    .next = ضعها جانبًا وأبلغ المشرف.
reason-grn_not_accepted = إذن الاستلام هذا غير معروف، أو لم تقبله مراقبة الجودة.
    .next = تحقق من رقم إذن الاستلام؛ واسأل مراقبة الجودة أو المشرف.
reason-not_on_grn = صنف هذه الوحدة غير مدرج في إذن الاستلام.
    .next = ضعها جانبًا؛ وأبلغ المشرف (إذن استلام خاطئ أو توريد خاطئ).
reason-excess_line = بند إذن الاستلام فيه كل الوحدات المتوقعة بالفعل.
    .next = ضع الوحدة الزائدة جانبًا وأبلغ المشرف.
reason-already_received = استُلمت هذه الوحدة من قبل.
    .next = ضعها جانبًا؛ قد يكون الوسم مكررًا.
reason-count_not_open = مهمة الجرد مغلقة أو معتمدة أو ملغاة.
    .next = اختر مهمة جرد مفتوحة، أو اطلب من المشرف فتح واحدة.
reason-manifest_not_ready = بيان الشحن غير معروف، أو ليس قيد التجهيز ولا مشحونًا.
    .next = تحقق من رقم بيان الشحن؛ واسأل المشرف.
reason-not_on_manifest = هذه الوحدة غير مدرجة في بيان الشحن.
    .next = لا تحمّلها على الشاحنة وأبلغ المشرف.
